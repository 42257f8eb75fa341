import { parseTracingConfig } from './tracing-config';

describe('parseTracingConfig', () => {
  it('leaves tracing off when no endpoint is set', () => {
    expect(parseTracingConfig({}, 'Hookline')).toEqual({ problems: [] });
    expect(parseTracingConfig({ OTEL_SERVICE_NAME: 'hooks', OTEL_TRACES_SAMPLER: 'always_on' }, 'Hookline')).toEqual({ problems: [] });
  });

  it('exports to the base endpoint’s /v1/traces with the standard defaults', () => {
    const { tracing, problems } = parseTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'Hookline');
    expect(problems).toEqual([]);
    expect(tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      compression: 'none',
      timeoutMs: 10_000,
      serviceName: 'hookline',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      batch: { scheduledDelayMillis: 5000, exportTimeoutMillis: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 },
    });
  });

  it('takes the traces endpoint as given, and the traces-specific variables over the general ones', () => {
    const { tracing } = parseTracingConfig(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp/spans',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-team=hooks,authorization=Bearer%20general',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'authorization=Bearer%20traces',
        OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '3000',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      },
      'Hookline',
    );
    expect(tracing).toMatchObject({
      url: 'https://traces.example.com/otlp/spans',
      protocol: 'http/json',
      headers: { 'x-team': 'hooks', authorization: 'Bearer traces' },
      timeoutMs: 3000,
      compression: 'gzip',
    });
  });

  it('reads the service name, resource attributes, sampler and batch settings', () => {
    const { tracing } = parseTracingConfig(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment.name=staging,team=a%2Cb',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_BSP_MAX_QUEUE_SIZE: '8192',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1024',
      },
      'Hookline',
    );
    expect(tracing).toMatchObject({
      serviceName: 'from-resource',
      resourceAttributes: { 'deployment.environment.name': 'staging', team: 'a,b' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
      batch: { scheduledDelayMillis: 100, exportTimeoutMillis: 30_000, maxQueueSize: 8192, maxExportBatchSize: 1024 },
    });
    const named = parseTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'hooks-eu' }, 'Hookline');
    expect(named.tracing?.serviceName).toBe('hooks-eu');
  });

  it('turns on with OTEL_TRACES_EXPORTER=otlp alone, and off with none or OTEL_SDK_DISABLED', () => {
    expect(parseTracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' }, 'Hookline').tracing?.url).toBe('http://localhost:4318/v1/traces');
    expect(
      parseTracingConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 'Hookline').tracing,
    ).toBeUndefined();
    expect(
      parseTracingConfig({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, 'Hookline').tracing,
    ).toBeUndefined();
  });

  it.each([
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'grpc://collector:4317'],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    ['OTEL_TRACES_EXPORTER', 'zipkin'],
    ['OTEL_TRACES_SAMPLER', 'sometimes'],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5'],
    ['OTEL_EXPORTER_OTLP_TIMEOUT', '-1'],
    ['OTEL_BSP_SCHEDULE_DELAY', 'soon'],
    ['OTEL_SDK_DISABLED', 'perhaps'],
    ['OTEL_EXPORTER_OTLP_COMPRESSION', 'brotli'],
    ['OTEL_RESOURCE_ATTRIBUTES', 'no-equals-sign'],
  ])('refuses %s=%j, naming it', (name, value) => {
    const { problems, tracing } = parseTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', [name]: value }, 'Hookline');
    expect(tracing).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
  });

  it('never repeats a header value in its message', () => {
    const { problems } = parseTracingConfig(
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'sk_live_secret' },
      'Hookline',
    );
    expect(problems).toEqual(['OTEL_EXPORTER_OTLP_HEADERS must be a comma-separated list of key=value pairs (percent-encoded)']);
  });

  it('wants the export batch to fit the queue', () => {
    const { problems } = parseTracingConfig(
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '200' },
      'Hookline',
    );
    expect(problems).toEqual(['OTEL_BSP_MAX_EXPORT_BATCH_SIZE (200) must be at most OTEL_BSP_MAX_QUEUE_SIZE (100)']);
  });
});
