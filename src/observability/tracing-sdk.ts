import { context, propagation, trace, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { AppConfig } from '../config/app-config';
import type { TracingConfig } from '../config/tracing-config';

/** DI token of the started {@link TracingSdk}, or null with tracing off (end-to-end specs bind their own). */
export const TRACING_SDK = Symbol('TRACING_SDK');

/** The provider of {@link TRACING_SDK}: the SDK is started only when an OTLP endpoint is configured. */
export const tracingSdkProvider = {
  provide: TRACING_SDK,
  useFactory: (config: AppConfig): TracingSdk | null => (config.tracing ? startTracingSdk(config.tracing) : null),
  inject: [AppConfig],
};

/** A started SDK: the provider spans go to, and how to flush and unregister it. */
export interface TracingSdk {
  provider: TracerProvider;
  /** Exports what is queued, then unregisters what this SDK registered. */
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry trace SDK from the OTEL_* configuration: a batch processor exporting
 * over OTLP/HTTP (protobuf or JSON), the configured sampler, and, registered globally, the tracer
 * provider, an AsyncLocalStorage context manager (so a caller's active span is the parent of a
 * publish) and the W3C trace-context propagator. When the process already registered its own
 * provider (Hookline embedded in an instrumented application), that one is used and this SDK is
 * not started.
 */
export function startTracingSdk(config: TracingConfig): TracingSdk {
  const exporterConfig = {
    url: config.url,
    headers: config.headers,
    timeoutMillis: config.timeoutMs,
    compression: config.compression,
  } as ConstructorParameters<typeof OtlpJsonExporter>[0];
  const exporter: SpanExporter =
    config.protocol === 'http/json' ? new OtlpJsonExporter(exporterConfig) : new OtlpProtobufExporter(exporterConfig);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, [ATTR_SERVICE_NAME]: config.serviceName }),
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor(exporter, config.batch)],
  });

  if (!trace.setGlobalTracerProvider(provider)) {
    void provider.shutdown();
    return { provider: trace.getTracerProvider(), shutdown: () => Promise.resolve() };
  }
  const contextManager = new AsyncLocalStorageContextManager().enable();
  const ownsContext = context.setGlobalContextManager(contextManager);
  if (!ownsContext) contextManager.disable();
  const ownsPropagator = propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    provider,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      if (ownsContext) context.disable();
      if (ownsPropagator) propagation.disable();
    },
  };
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the specification names them. */
export function samplerOf(config: Pick<TracingConfig, 'sampler' | 'samplerRatio'>): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
