import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Tracing, traceparentOf } from './tracing';

describe('Tracing', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager();
  const tracing = new Tracing({ provider, shutdown: () => Promise.resolve() });

  beforeAll(() => context.setGlobalContextManager(contextManager.enable()));
  afterAll(() => context.disable());
  beforeEach(() => exporter.reset());

  const attempt = {
    storeId: 'st_1',
    eventId: 'evt_1',
    eventType: 'order.created',
    endpointId: 'wh_1',
    deliveryId: 'dlv_1',
    attemptNumber: 2,
    url: 'https://hooks.example.com:8443/in?token=secret',
  };

  it('is off, and answers nothing, without an OTLP endpoint', () => {
    const off = new Tracing(null);
    expect(off.enabled).toBe(false);
    expect(off.startPublish('st_1', ['order.created'])).toBeUndefined();
    expect(off.startAttempt({ ...attempt, parent: null })).toBeUndefined();
  });

  it('makes an attempt the child of the publish whose traceparent its event stored', () => {
    const publish = tracing.startPublish('st_1', ['order.created'])!;
    publish.end({ deliveries: 3, eventId: 'evt_1' });
    const sent = tracing.startAttempt({ ...attempt, parent: publish.traceparent })!;
    sent.end({ statusCode: 200, error: null, durationMs: 12, succeeded: true, status: 'succeeded' });

    const [publishSpan, attemptSpan] = exporter.getFinishedSpans();
    expect(publishSpan.name).toBe('publish order.created');
    expect(publishSpan.kind).toBe(SpanKind.PRODUCER);
    expect(publishSpan.attributes).toMatchObject({
      'hookline.store.id': 'st_1',
      'hookline.event.type': 'order.created',
      'hookline.event.id': 'evt_1',
      'hookline.event.deliveries': 3,
    });
    expect(traceparentOf(publishSpan.spanContext())).toBe(publish.traceparent);
    expect(attemptSpan.name).toBe('deliver order.created');
    expect(attemptSpan.kind).toBe(SpanKind.CLIENT);
    expect(attemptSpan.spanContext().traceId).toBe(publishSpan.spanContext().traceId);
    expect(attemptSpan.parentSpanContext?.spanId).toBe(publishSpan.spanContext().spanId);
    expect(traceparentOf(attemptSpan.spanContext())).toBe(sent.traceparent);
    expect(sent.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(attemptSpan.attributes).toEqual({
      'hookline.store.id': 'st_1',
      'hookline.event.id': 'evt_1',
      'hookline.event.type': 'order.created',
      'hookline.endpoint.id': 'wh_1',
      'hookline.delivery.id': 'dlv_1',
      'hookline.attempt.number': 2,
      'hookline.attempt.duration_ms': 12,
      'hookline.delivery.status': 'succeeded',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'url.scheme': 'https',
      'server.address': 'hooks.example.com',
      'server.port': 8443,
    });
    expect(attemptSpan.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('marks a failed attempt as an error, with the attempt’s error and the retry decided', () => {
    tracing
      .startAttempt({ ...attempt, parent: null })!
      .end({ statusCode: 500, error: 'HTTP 500', durationMs: 3, succeeded: false, status: 'pending', retryDelayMs: 1000 });
    tracing
      .startAttempt({ ...attempt, parent: null })!
      .end({ statusCode: null, error: 'connection refused', durationMs: 1, succeeded: false, status: 'failed' });
    const [answered, refused] = exporter.getFinishedSpans();
    expect(answered.status).toEqual({ code: SpanStatusCode.ERROR, message: 'HTTP 500' });
    expect(answered.attributes).toMatchObject({
      'error.type': '500',
      'hookline.delivery.status': 'pending',
      'hookline.retry.delay_ms': 1000,
    });
    expect(refused.status).toEqual({ code: SpanStatusCode.ERROR, message: 'connection refused' });
    expect(refused.attributes['http.response.status_code']).toBeUndefined();
    expect(refused.attributes['error.type']).toBe('attempt_failed');
    // Without a stored parent, an attempt starts its own trace.
    expect(refused.parentSpanContext).toBeUndefined();
  });

  it('joins the caller’s active span, and marks a refused publish as an error', async () => {
    const caller = provider.getTracer('store-orders');
    await caller.startActiveSpan('place order', async (span) => {
      await Promise.resolve();
      tracing
        .startPublish('st_1', ['order.created', 'order.paid'])!
        .fail(Object.assign(new Error('data is invalid'), { code: 'InvalidData' }));
      span.end();
    });
    const [publishSpan, callerSpan] = exporter.getFinishedSpans();
    expect(publishSpan.name).toBe('publish batch');
    expect(publishSpan.attributes).toMatchObject({ 'hookline.event.count': 2, 'error.type': 'InvalidData' });
    expect(publishSpan.attributes['hookline.event.type']).toBeUndefined();
    expect(publishSpan.status).toEqual({ code: SpanStatusCode.ERROR, message: 'data is invalid' });
    expect(publishSpan.parentSpanContext?.spanId).toBe(callerSpan.spanContext().spanId);
    expect(publishSpan.spanContext().traceId).toBe(callerSpan.spanContext().traceId);
  });

  it('sends an unsampled publish’s decision on to its attempts', () => {
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 0,
      isRemote: true,
    });
    const publish = context.with(unsampled, () => tracing.startPublish('st_1', ['order.created'])!);
    expect(publish.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
  });
});
