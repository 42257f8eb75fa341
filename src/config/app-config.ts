import { resolve } from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { type EgressProxy, parseEgressProxy } from './egress-proxy';
import { EnvironmentVariables, LOG_LEVELS, ROLES } from './environment-variables';
import { parseFrameAncestors } from './frame-ancestors';
import { formatDuration, parseDuration, parseRetrySchedule } from './retry-schedule';
import { parseTracingConfig, type TracingConfig } from './tracing-config';

export type Role = (typeof ROLES)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Thrown when the environment is invalid; the message names every offending variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * The validated, typed configuration. Built once at start by {@link loadConfig}
 * and injected wherever it is needed; nothing else reads process.env.
 */
export class AppConfig {
  readonly nodeEnv: 'development' | 'production' | 'test';
  readonly serviceName: string;
  readonly port: number;
  readonly host: string;
  /** A real PostgreSQL, or undefined: main.ts then starts the embedded one and fills this in. */
  readonly databaseUrl?: string;
  /** Set by main.ts when it started the embedded server (generated keys then live in DATA_DIR). */
  readonly embeddedDatabase: boolean;
  readonly dataDir: string;
  readonly adminApiKey?: string;
  /** 32 bytes, or undefined: one is generated and kept (see SecretCipher). */
  readonly secretEncryptionKey?: Buffer;
  readonly deliveryTimeoutMs: number;
  /** Delay before each attempt; its length is the number of attempts in a cycle. */
  readonly retryScheduleMs: readonly number[];
  /** Delays after the first are spread by up to ± this fraction. */
  readonly retryJitter: number;
  /** Cap on the wait a receiver's Retry-After asks for. */
  readonly retryAfterMaxMs: number;
  /** Attempts one delivery may ever get, manual retries included (MAX_ATTEMPTS_PER_DELIVERY). */
  readonly maxAttemptsPerDelivery: number;
  /** Which signature headers a delivery carries: the X-Webhook-* set, the Standard Webhooks set, or both. */
  readonly signatureHeaders: { seed: boolean; standard: boolean };
  readonly allowHttpUrls: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly docsUrl: string;
  /** Where clients reach the API, without a trailing slash (PUBLIC_URL); a webhook may not point at its origin. */
  readonly publicUrl: string;
  /** Origins whose pages may frame the dashboard (PORTAL_FRAME_ANCESTORS); empty: none may. */
  readonly portalFrameAncestors: readonly string[];
  readonly role: Role;
  readonly logLevel: LogLevel;
  readonly dbPoolSize: number;
  readonly dispatchConcurrency: number;
  readonly endpointConcurrency: number;
  /** Slots one store may hold at once (STORE_CONCURRENCY), at most dispatchConcurrency. */
  readonly storeConcurrency: number;
  readonly shutdownTimeoutMs: number;
  /** Added to deliveryTimeoutMs to make a claim's lease (see Dispatcher). */
  readonly leaseMarginMs: number;
  /** Requests a minute per API key (or client IP without one), per process; 0: no limit. */
  readonly rateLimitPerMinute: number;
  /** Webhooks one store may hold (MAX_WEBHOOKS_PER_STORE). */
  readonly maxWebhooksPerStore: number;
  /** Days of events, deliveries and attempts kept (RETENTION_DAYS); 0 keeps everything. */
  readonly retentionDays: number;
  /** An endpoint whose attempts have all failed for this long is disabled (with enough failed deliveries). */
  readonly endpointDisableAfterMs: number;
  /** Deliveries that must have ended `failed` meanwhile. */
  readonly endpointDisableMinFailures: number;
  /** Deliveries one replay or retry-failed request queues at most (MAX_REPLAY_DELIVERIES). */
  readonly maxReplayDeliveries: number;
  /** The statement timeout of a replay or retry-failed request (REPLAY_TIMEOUT_MS). */
  readonly replayTimeoutMs: number;
  /** A delivery still pending this long after its event, or its latest manual retry, expires (MAX_DELIVERY_AGE). */
  readonly maxDeliveryAgeMs: number;
  /** OpenTelemetry export from the standard OTEL_* variables; undefined: tracing is off and nothing is started. */
  readonly tracing?: TracingConfig;
  /** The forward proxy deliveries and token requests leave through (EGRESS_PROXY_URL); undefined: direct. */
  readonly egressProxy?: EgressProxy;

  constructor(values: AppConfigValues) {
    Object.assign(this, values);
  }

  get runsApi(): boolean {
    return this.role !== 'worker';
  }

  get runsWorker(): boolean {
    return this.role !== 'api';
  }

  /** A copy with some values replaced (tests, the embedded database's URL). */
  with(overrides: Partial<AppConfigValues>): AppConfig {
    return new AppConfig({ ...this, ...overrides });
  }
}

export type AppConfigValues = Omit<AppConfig, 'runsApi' | 'runsWorker' | 'with'>;

function describe(errors: ValidationError[]): string[] {
  return errors.flatMap((error) => Object.values(error.constraints ?? {}).slice(0, 1));
}

/** Validates the environment once; throws {@link ConfigError} naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const vars = plainToInstance(EnvironmentVariables, present);
  const errors = validateSync(vars, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) throw new ConfigError(describe(errors));

  const production = vars.NODE_ENV === 'production';
  const problems: string[] = [];
  const maxDeliveryAgeMs = parseDuration(vars.MAX_DELIVERY_AGE)!;
  problems.push(...deliveryAgeProblems(vars.MAX_DELIVERY_AGE, maxDeliveryAgeMs, vars.RETRY_SCHEDULE_MS));
  let secretEncryptionKey: Buffer | undefined;
  if (vars.SECRET_ENCRYPTION_KEY) {
    secretEncryptionKey = Buffer.from(vars.SECRET_ENCRYPTION_KEY, 'base64');
    if (secretEncryptionKey.length !== 32) {
      problems.push('SECRET_ENCRYPTION_KEY must decode to exactly 32 bytes');
    }
  } else if (production) {
    problems.push('SECRET_ENCRYPTION_KEY is required when NODE_ENV=production');
  }
  const publicUrl = new URL(vars.PUBLIC_URL ?? `http://localhost:${vars.PORT}`);
  if (publicUrl.username || publicUrl.password || publicUrl.search || publicUrl.hash) {
    problems.push('PUBLIC_URL must be an origin with an optional path: no user, password, query or fragment');
  }
  const frameAncestors = parseFrameAncestors(vars.PORTAL_FRAME_ANCESTORS);
  problems.push(...frameAncestors.problems);
  const retrySchedule = parseRetrySchedule('RETRY_SCHEDULE_MS', vars.RETRY_SCHEDULE_MS).delays;
  if (vars.MAX_ATTEMPTS_PER_DELIVERY < retrySchedule.length) {
    problems.push(
      `MAX_ATTEMPTS_PER_DELIVERY (${vars.MAX_ATTEMPTS_PER_DELIVERY}) must be at least the ${retrySchedule.length} attempts of RETRY_SCHEDULE_MS`,
    );
  }
  const tracing = parseTracingConfig(present, vars.SERVICE_NAME);
  problems.push(...tracing.problems);
  const egress = parseEgressProxy(vars.EGRESS_PROXY_URL);
  problems.push(...egress.problems);
  if (problems.length > 0) throw new ConfigError(problems);

  return new AppConfig({
    nodeEnv: vars.NODE_ENV,
    serviceName: vars.SERVICE_NAME,
    port: vars.PORT,
    host: vars.HOST,
    databaseUrl: vars.DATABASE_URL,
    embeddedDatabase: false,
    dataDir: resolve(vars.DATA_DIR),
    adminApiKey: vars.ADMIN_API_KEY,
    secretEncryptionKey,
    deliveryTimeoutMs: vars.DELIVERY_TIMEOUT_MS,
    retryScheduleMs: retrySchedule,
    retryJitter: vars.RETRY_JITTER,
    retryAfterMaxMs: vars.RETRY_AFTER_MAX_MS,
    maxAttemptsPerDelivery: vars.MAX_ATTEMPTS_PER_DELIVERY,
    signatureHeaders: { seed: vars.SIGNATURE_HEADERS.includes('seed'), standard: vars.SIGNATURE_HEADERS.includes('standard') },
    allowHttpUrls: vars.ALLOW_HTTP_URLS ?? !production,
    allowPrivateNetworks: vars.ALLOW_PRIVATE_NETWORKS ?? !production,
    docsUrl: vars.DOCS_URL,
    publicUrl: publicUrl.href.replace(/\/$/, ''),
    portalFrameAncestors: frameAncestors.origins,
    role: vars.ROLE,
    logLevel: vars.LOG_LEVEL,
    dbPoolSize: vars.DB_POOL_SIZE,
    dispatchConcurrency: vars.DISPATCH_CONCURRENCY,
    endpointConcurrency: vars.ENDPOINT_CONCURRENCY,
    storeConcurrency: Math.min(vars.STORE_CONCURRENCY ?? Math.max(1, Math.floor(vars.DISPATCH_CONCURRENCY / 4)), vars.DISPATCH_CONCURRENCY),
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS,
    leaseMarginMs: vars.LEASE_MARGIN_MS,
    rateLimitPerMinute: vars.RATE_LIMIT_PER_MINUTE,
    maxWebhooksPerStore: vars.MAX_WEBHOOKS_PER_STORE,
    retentionDays: vars.RETENTION_DAYS,
    endpointDisableAfterMs: parseDuration(vars.ENDPOINT_DISABLE_AFTER_MS)!,
    endpointDisableMinFailures: vars.ENDPOINT_DISABLE_MIN_FAILURES,
    maxReplayDeliveries: vars.MAX_REPLAY_DELIVERIES,
    replayTimeoutMs: vars.REPLAY_TIMEOUT_MS,
    maxDeliveryAgeMs,
    tracing: tracing.tracing,
    egressProxy: egress.proxy,
  });
}

/**
 * MAX_DELIVERY_AGE must leave room for a whole cycle of RETRY_SCHEDULE_MS: a delivery would
 * otherwise expire before its schedule could end it.
 */
function deliveryAgeProblems(text: string, maxAgeMs: number, schedule: string): string[] {
  const spanMs = parseRetrySchedule('RETRY_SCHEDULE_MS', schedule).delays.reduce((sum, delay) => sum + delay, 0);
  if (maxAgeMs >= spanMs) return [];
  return [`MAX_DELIVERY_AGE (${text}) must be at least the ${formatDuration(spanMs)} that RETRY_SCHEDULE_MS adds up to`];
}
