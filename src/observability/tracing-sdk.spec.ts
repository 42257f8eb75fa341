import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '../config/app-config';
import { samplerOf, startTracingSdk } from './tracing-sdk';

describe('startTracingSdk', () => {
  const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing!;

  it('registers the provider, the context manager and the W3C propagator, and unregisters them on shutdown', async () => {
    const sdk = startTracingSdk(config);
    const tracer = trace.getTracer('spec');
    const span = tracer.startSpan('outer');
    expect(span.isRecording()).toBe(true);
    const carrier: Record<string, string> = {};
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => {
      expect(trace.getActiveSpan()).toBe(span);
      propagation.inject(context.active(), carrier);
    });
    expect(carrier.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    // Not ended, so nothing is exported: the export is test/tracing.e2e-spec.ts's, in a real process.
    await sdk.shutdown();
    expect(trace.getTracer('spec').startSpan('after').isRecording()).toBe(false);
  });

  it('leaves a provider the process registered first in place, and uses it', async () => {
    const theirs = new BasicTracerProvider();
    trace.setGlobalTracerProvider(theirs);
    const sdk = startTracingSdk(config);
    expect(trace.getTracerProvider()).not.toBeInstanceOf(BasicTracerProvider); // the API's proxy…
    expect(sdk.provider.getTracer('spec').startSpan('x').isRecording()).toBe(true); // …to their provider
    await sdk.shutdown();
    expect(trace.getTracer('spec').startSpan('still theirs').isRecording()).toBe(true);
    trace.disable();
  });
});

describe('samplerOf', () => {
  it.each([
    ['always_on', 'AlwaysOnSampler'],
    ['always_off', 'AlwaysOffSampler'],
    ['traceidratio', 'TraceIdRatioBased{0.5}'],
    [
      'parentbased_always_on',
      'ParentBased{root=AlwaysOnSampler, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    ],
    [
      'parentbased_always_off',
      'ParentBased{root=AlwaysOffSampler, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    ],
    [
      'parentbased_traceidratio',
      'ParentBased{root=TraceIdRatioBased{0.5}, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    ],
  ] as const)('builds %s', (sampler, described) => {
    expect(samplerOf({ sampler, samplerRatio: 0.5 }).toString()).toBe(described);
  });
});
