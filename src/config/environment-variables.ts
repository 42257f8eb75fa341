import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
} from 'class-validator';
import { parseDuration, parseRetrySchedule } from './retry-schedule';

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;

/** An integer variable; the message names the variable through `$property`. */
function IntegerInRange(min: number, max: number): PropertyDecorator {
  const message = `$property must be an integer from ${min} to ${max}`;
  return (target, key) => {
    Transform(toInt)(target, key);
    IsInt({ message })(target, key);
    Min(min, { message })(target, key);
    Max(max, { message })(target, key);
  };
}

const toBool = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const normalized = value.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(normalized)) return true;
  if (['false', '0', 'no'].includes(normalized)) return false;
  return value;
};

function BooleanFlag(): PropertyDecorator {
  return (target, key) => {
    Transform(toBool)(target, key);
    IsBoolean({ message: '$property must be true or false' })(target, key);
  };
}

/** A retry schedule with optional units; the message is the parser's, naming the variable. */
function RetrySchedule(): PropertyDecorator {
  return ValidateBy({
    name: 'retrySchedule',
    validator: {
      validate: (value: unknown, args) => typeof value === 'string' && parseRetrySchedule(args!.property, value).problems.length === 0,
      defaultMessage: (args) =>
        typeof args!.value === 'string'
          ? parseRetrySchedule(args!.property, args!.value).problems.join('; ')
          : `${args!.property} must be text`,
    },
  });
}

/** A duration with an optional unit (`250ms`, `30s`, `5m`, `2h`, `5d`; a bare number is ms) from `min` to `max` ms. */
function DurationInRange(min: number, max: number, describeRange: string): PropertyDecorator {
  return ValidateBy({
    name: 'durationInRange',
    validator: {
      validate: (value: unknown) => {
        const ms = typeof value === 'string' ? parseDuration(value) : undefined;
        return ms !== undefined && ms >= min && ms <= max;
      },
      defaultMessage: (args) => `${args!.property} must be a duration (a number with ms, s, m, h or d, or bare ms) from ${describeRange}`,
    },
  });
}

const toNumber = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;

export const ROLES = ['all', 'api', 'worker'] as const;
/** `seed`: the X-Webhook-* headers; `standard`: the Standard Webhooks webhook-* headers. */
export const SIGNATURE_HEADER_SETS = ['seed,standard', 'standard,seed', 'seed', 'standard'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The raw environment, one property per variable (docs/configuration.md lists them).
 * Property names are the variable names so that a validation error names the variable.
 */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @IsString()
  @MinLength(1)
  @MaxLength(40)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'SERVICE_NAME must be a single token such as "Hookline"' })
  SERVICE_NAME = 'Hookline';

  @IntegerInRange(0, 65535)
  PORT = 3000;

  @IsString()
  @MinLength(1)
  HOST = '0.0.0.0';

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  @IsString()
  @MinLength(1)
  DATA_DIR = './.data';

  @IsOptional()
  @IsString()
  @MinLength(24, { message: 'ADMIN_API_KEY must be at least 24 characters long' })
  @MaxLength(256)
  ADMIN_API_KEY?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9+/_-]{43}=?$/, {
    message: 'SECRET_ENCRYPTION_KEY must be 32 bytes encoded as base64 (e.g. `openssl rand -base64 32`)',
  })
  SECRET_ENCRYPTION_KEY?: string;

  @IntegerInRange(100, 600_000)
  DELIVERY_TIMEOUT_MS = 10_000;

  /** Delay before each attempt: `0,1000,4000` or with units, `0,5s,5m,30m,2h,5h,10h,10h`. */
  @RetrySchedule()
  RETRY_SCHEDULE_MS = '0,1000,4000';

  /** Each delay after the first is spread by up to ± this fraction, so failures that came together do not retry together. */
  @Transform(toNumber)
  @IsNumber({}, { message: 'RETRY_JITTER must be a number from 0 to 0.5' })
  @Min(0, { message: 'RETRY_JITTER must be a number from 0 to 0.5' })
  @Max(0.5, { message: 'RETRY_JITTER must be a number from 0 to 0.5' })
  RETRY_JITTER = 0.1;

  /** The longest a receiver's Retry-After can push an attempt back. */
  @IntegerInRange(0, 7 * 24 * 3_600_000)
  RETRY_AFTER_MAX_MS = 3_600_000;

  /** Attempts one delivery may ever get, manual retries included: a loop between endpoints ends there. */
  @IntegerInRange(1, 100_000)
  MAX_ATTEMPTS_PER_DELIVERY = 100;

  @IsIn(SIGNATURE_HEADER_SETS, { message: 'SIGNATURE_HEADERS must be seed, standard or seed,standard' })
  SIGNATURE_HEADERS: (typeof SIGNATURE_HEADER_SETS)[number] = 'seed,standard';

  @IsOptional()
  @BooleanFlag()
  ALLOW_HTTP_URLS?: boolean;

  @IsOptional()
  @BooleanFlag()
  ALLOW_PRIVATE_NETWORKS?: boolean;

  @IsUrl({ require_tld: false, require_protocol: true }, { message: 'DOCS_URL must be an absolute URL' })
  DOCS_URL = 'http://localhost:3000/docs';

  /** Where clients reach the API (an origin, optionally with a path); unset: `http://localhost:$PORT`. */
  @IsOptional()
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { message: 'PUBLIC_URL must be an absolute http:// or https:// URL, e.g. https://hooks.example.com' },
  )
  PUBLIC_URL?: string;

  /** Origins whose pages may frame the dashboard (portal links embedded in a platform's pages), comma separated; unset: none. */
  @IsOptional()
  @IsString()
  @MaxLength(4096, { message: 'PORTAL_FRAME_ANCESTORS must be at most 4096 characters' })
  PORTAL_FRAME_ANCESTORS?: string;

  @IsIn(ROLES, { message: `ROLE must be one of: ${ROLES.join(', ')}` })
  ROLE: (typeof ROLES)[number] = 'all';

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of: ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  /** Every connection the process may open (see database/connection-budget.ts). */
  @IntegerInRange(7, 200)
  DB_POOL_SIZE = 15;

  @IntegerInRange(1, 10_000)
  DISPATCH_CONCURRENCY = 512;

  @IntegerInRange(1, 1000)
  ENDPOINT_CONCURRENCY = 64;

  /** Slots of DISPATCH_CONCURRENCY one store may hold at once; unset: a quarter of them (at least 1). */
  @IsOptional()
  @IntegerInRange(1, 10_000)
  STORE_CONCURRENCY?: number;

  @IntegerInRange(0, 600_000)
  SHUTDOWN_TIMEOUT_MS = 15_000;

  /**
   * A claim's lease is DELIVERY_TIMEOUT_MS plus this margin (time to write the outcome). It is
   * also how long a crashed worker's claims wait before another worker takes them over; the
   * crash tests shorten it so as not to wait 30 s. Too short risks re-sending an attempt whose
   * outcome is merely slow to be written (a duplicate, never a loss).
   */
  @IntegerInRange(500, 600_000)
  LEASE_MARGIN_MS = 30_000;

  /**
   * Requests a minute per API key (per client IP for requests without a valid key), per process;
   * 0 turns rate limiting off. Over it: 429 with Retry-After.
   */
  @IntegerInRange(0, 10_000_000)
  RATE_LIMIT_PER_MINUTE = 6000;

  /** Webhooks one store may hold; one more is refused with a 409. */
  @IntegerInRange(1, 1_000_000)
  MAX_WEBHOOKS_PER_STORE = 100;

  /** Days of events, deliveries and attempts kept; 0 keeps everything. Replay reaches back no further. */
  @IntegerInRange(0, 36_500)
  RETENTION_DAYS = 30;

  /** An endpoint with no successful attempt for this long (and enough failed deliveries) is disabled: `5d`, `12h`, or ms. */
  @DurationInRange(1_000, 365 * 86_400_000, '1s to 365d')
  ENDPOINT_DISABLE_AFTER_MS = '5d';

  /** Deliveries that must have ended `failed` in that time before an endpoint is disabled. */
  @IntegerInRange(1, 1_000_000)
  ENDPOINT_DISABLE_MIN_FAILURES = 10;

  /** Deliveries one replay or retry-failed request queues at most; the answer says where to continue. */
  @IntegerInRange(1, 1_000_000)
  MAX_REPLAY_DELIVERIES = 10_000;

  /** How long one replay or retry-failed request's statements may run before it is cancelled, queuing nothing. */
  @IntegerInRange(100, 600_000)
  REPLAY_TIMEOUT_MS = 30_000;

  /** A delivery still pending this long after its event ends `failed` (`7d`, `6s`, or ms); at least the retry schedule. */
  @DurationInRange(1_000, 365 * 86_400_000, '1s to 365d')
  MAX_DELIVERY_AGE = '7d';

  /** The forward proxy deliveries and token requests leave through (`http://host:port`); checked in egress-proxy.ts. */
  @IsOptional()
  @IsString()
  EGRESS_PROXY_URL?: string;
}
