/**
 * The standard OpenTelemetry variables Hookline reads
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/), validated
 * like the rest of the environment. Tracing is on when an OTLP endpoint is set (or
 * OTEL_TRACES_EXPORTER=otlp asks for the default one); otherwise nothing is started
 * (docs/operations.md#tracing).
 */

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

export interface TracingConfig {
  /** Where spans are POSTed: the traces endpoint as given, or the base endpoint's `/v1/traces`. */
  url: string;
  protocol: OtlpProtocol;
  /** Sent with every export (an API key, say): never logged. */
  headers: Record<string, string>;
  compression: 'gzip' | 'none';
  timeoutMs: number;
  /** The resource's `service.name`. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, service.name aside. */
  resourceAttributes: Record<string, string>;
  sampler: TraceSamplerName;
  /** The ratio of the traceidratio samplers, from 0 to 1. */
  samplerRatio: number;
  batch: { scheduledDelayMillis: number; exportTimeoutMillis: number; maxQueueSize: number; maxExportBatchSize: number };
}

/** The endpoint OTEL_TRACES_EXPORTER=otlp exports to when no endpoint is set (OTLP/HTTP's default port). */
export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The tracing configuration, or undefined when tracing is off; `problems` names each bad variable
 * (a header's value is never repeated: it may be a key).
 */
export function parseTracingConfig(env: Env, defaultServiceName: string): { tracing?: TracingConfig; problems: string[] } {
  const problems: string[] = [];
  const value = (name: string): string | undefined => {
    const text = env[name]?.trim();
    return text === '' ? undefined : text;
  };

  const disabled = value('OTEL_SDK_DISABLED');
  if (disabled !== undefined && !['true', 'false'].includes(disabled.toLowerCase())) {
    problems.push('OTEL_SDK_DISABLED must be true or false');
  }
  const exporter = value('OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') {
    problems.push(`OTEL_TRACES_EXPORTER must be otlp or none: ${defaultServiceName} exports traces over OTLP/HTTP only`);
  }
  const tracesEndpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = value('OTEL_EXPORTER_OTLP_ENDPOINT');
  for (const [name, endpoint] of [
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', baseEndpoint],
  ] as const) {
    if (endpoint !== undefined && !isHttpUrl(endpoint)) {
      problems.push(`${name} must be an http:// or https:// URL, such as http://otel-collector:4318`);
    }
  }

  const protocol = (value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? value('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf').toLowerCase();
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    const name = value('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
    problems.push(`${name} must be http/protobuf or http/json (OTLP over HTTP, port 4318 on a collector); grpc is not supported`);
  }
  const headers = {
    ...parseKeyValues('OTEL_EXPORTER_OTLP_HEADERS', value('OTEL_EXPORTER_OTLP_HEADERS'), problems, false),
    ...parseKeyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', value('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), problems, false),
  };
  const compression = (value('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION') ?? value('OTEL_EXPORTER_OTLP_COMPRESSION') ?? 'none').toLowerCase();
  if (compression !== 'gzip' && compression !== 'none') problems.push('OTEL_EXPORTER_OTLP_COMPRESSION must be gzip or none');
  const timeoutMs = integer(
    value('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT' : 'OTEL_EXPORTER_OTLP_TIMEOUT',
    value('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? value('OTEL_EXPORTER_OTLP_TIMEOUT'),
    10_000,
    1,
    600_000,
    problems,
  );

  const resourceAttributes = parseKeyValues('OTEL_RESOURCE_ATTRIBUTES', value('OTEL_RESOURCE_ATTRIBUTES'), problems, true);
  const serviceName = value('OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? defaultServiceName.toLowerCase();
  delete resourceAttributes['service.name'];

  const sampler = (value('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!(TRACE_SAMPLERS as readonly string[]).includes(sampler)) {
    problems.push(`OTEL_TRACES_SAMPLER must be one of: ${TRACE_SAMPLERS.join(', ')}`);
  }
  const ratioText = value('OTEL_TRACES_SAMPLER_ARG');
  const samplerRatio = ratioText === undefined ? 1 : Number(ratioText);
  if (ratioText !== undefined && (!/^\d+(\.\d+)?$/.test(ratioText) || samplerRatio > 1)) {
    problems.push('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of traces kept)');
  }

  const maxQueueSize = integer('OTEL_BSP_MAX_QUEUE_SIZE', value('OTEL_BSP_MAX_QUEUE_SIZE'), 2048, 1, 1_000_000, problems);
  const batch = {
    scheduledDelayMillis: integer('OTEL_BSP_SCHEDULE_DELAY', value('OTEL_BSP_SCHEDULE_DELAY'), 5000, 1, 600_000, problems),
    exportTimeoutMillis: integer('OTEL_BSP_EXPORT_TIMEOUT', value('OTEL_BSP_EXPORT_TIMEOUT'), 30_000, 1, 600_000, problems),
    maxQueueSize,
    maxExportBatchSize: integer('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', value('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'), 512, 1, 1_000_000, problems),
  };
  if (batch.maxExportBatchSize > maxQueueSize) {
    problems.push(`OTEL_BSP_MAX_EXPORT_BATCH_SIZE (${batch.maxExportBatchSize}) must be at most OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize})`);
  }

  const on = disabled?.toLowerCase() !== 'true' && exporter !== 'none' && (tracesEndpoint ?? baseEndpoint ?? exporter) !== undefined;
  if (problems.length > 0 || !on) return { problems };
  return {
    problems,
    tracing: {
      url: tracesEndpoint ?? `${(baseEndpoint ?? DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '')}/v1/traces`,
      protocol: protocol as OtlpProtocol,
      headers,
      compression: compression as 'gzip' | 'none',
      timeoutMs,
      serviceName,
      resourceAttributes,
      sampler: sampler as TraceSamplerName,
      samplerRatio,
      batch,
    },
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function integer(name: string, text: string | undefined, fallback: number, min: number, max: number, problems: string[]): number {
  if (text === undefined) return fallback;
  const parsed = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(parsed >= min && parsed <= max)) {
    problems.push(`${name} must be an integer from ${min} to ${max}`);
    return fallback;
  }
  return parsed;
}

/**
 * `key1=value1,key2=value2`, each part percent-encoded (W3C Baggage octets, as the OTEL variables
 * take them). A bad list is named, never repeated: header values are often keys.
 */
function parseKeyValues(name: string, text: string | undefined, problems: string[], showEntry: boolean): Record<string, string> {
  const pairs: Record<string, string> = {};
  if (text === undefined) return pairs;
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const equals = entry.indexOf('=');
    let key = '';
    let decoded: string | undefined;
    if (equals > 0) {
      try {
        key = decodeURIComponent(entry.slice(0, equals).trim());
        decoded = decodeURIComponent(entry.slice(equals + 1).trim());
      } catch {
        decoded = undefined;
      }
    }
    if (key === '' || decoded === undefined) {
      const shown = showEntry ? `; ${JSON.stringify(entry.trim().slice(0, 100))} is not one` : '';
      problems.push(`${name} must be a comma-separated list of key=value pairs (percent-encoded)${shown}`);
      return {};
    }
    pairs[key] = decoded;
  }
  return pairs;
}
