import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { lastValueFrom, of } from 'rxjs';
import { TraceContextInterceptor } from './trace-context.interceptor';

describe('TraceContextInterceptor', () => {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
  });

  const http = (headers: Record<string, string>) =>
    ({ switchToHttp: () => ({ getRequest: () => ({ headers }) }) }) as unknown as ExecutionContext;
  const activeSpanContext = (): CallHandler => ({ handle: () => of(trace.getActiveSpan()?.spanContext()) });

  it('runs the handler in the trace the request’s traceparent names', async () => {
    const seen = await lastValueFrom(
      new TraceContextInterceptor().intercept(
        http({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }),
        activeSpanContext(),
      ),
    );
    expect(seen).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
  });

  it('leaves a request without one, or with a malformed one, in no trace', async () => {
    expect(await lastValueFrom(new TraceContextInterceptor().intercept(http({}), activeSpanContext()))).toBeUndefined();
    expect(
      await lastValueFrom(new TraceContextInterceptor().intercept(http({ traceparent: 'nonsense' }), activeSpanContext())),
    ).toBeUndefined();
  });
});
