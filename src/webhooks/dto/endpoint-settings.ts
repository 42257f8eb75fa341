import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, Max, Min, ValidateBy, ValidateIf } from 'class-validator';
import { retryScheduleProblems } from '../../config/retry-schedule';
import { endpointHeaderProblems } from '../endpoint-headers';
import { clientTlsProblems, receiverAuthProblems, type ClientTls, type ReceiverAuth } from '../receiver-credentials';
import { AUTH_INPUT_SCHEMA, TLS_INPUT_SCHEMA } from './receiver-auth.dto';

/** A class-validator rule whose message is the problems a checker found, each naming the field. */
function Checked(name: string, problems: (value: unknown) => string[]): PropertyDecorator {
  return ValidateBy({
    name,
    validator: {
      validate: (value: unknown) => problems(value).length === 0,
      defaultMessage: (args) => problems(args!.value).join('; '),
    },
  });
}

function scheduleProblems(value: unknown): string[] {
  if (!Array.isArray(value)) return ['retrySchedule must be an array of delays in ms, or null'];
  if (value.some((delay) => typeof delay !== 'number')) return ['retrySchedule entries must be whole milliseconds, 0 or more'];
  return retryScheduleProblems('retrySchedule', value as number[]);
}

/** The highest rateLimitPerSecond an endpoint may set. */
export const MAX_RATE_LIMIT_PER_SECOND = 10_000;

const RATE_LIMIT_RULE = `rateLimitPerSecond must be a whole number from 1 to ${MAX_RATE_LIMIT_PER_SECOND}, or null`;

/** The delivery settings an endpoint may set on create and change with PUT. */
export class EndpointSettingsDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true },
    example: { Authorization: 'Bearer 9f8e7d', 'X-Store': 'berlin-1' },
    description:
      'Up to 20 extra request headers sent with every attempt (test deliveries too). Names are HTTP tokens of at most 256 characters, ' +
      'values printable ASCII up to 1 KiB, and all names and values together at most 8 KiB. ' +
      'Content-Type, Content-Length, Host, User-Agent, hop-by-hop headers, X-Webhook-* and webhook-* are refused. ' +
      'Sensitive headers (Authorization, Cookie, and any name containing key, token, secret, auth, password or signature) are stored ' +
      'encrypted, never returned and never empty; on PUT, giving one as null keeps its stored value. A PUT replaces the whole set. Default {}.',
  })
  @ValidateIf((_dto: object, value: unknown) => value !== undefined)
  @Checked('endpointHeaders', endpointHeaderProblems)
  headers?: Record<string, string | null>;

  @ApiPropertyOptional({
    type: [Number],
    nullable: true,
    example: [0, 5_000, 300_000, 1_800_000, 7_200_000],
    description:
      'Delay in ms before each attempt of a cycle: 1 to 30 entries, the first 0, at most 7 days and at most MAX_DELIVERY_AGE in all ' +
      "(a delivery still pending that long after its event expires). null uses the deployment's RETRY_SCHEDULE_MS.",
  })
  @ValidateIf((_dto: object, value: unknown) => value !== undefined && value !== null)
  @Checked('retrySchedule', scheduleProblems)
  retrySchedule?: number[] | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: MAX_RATE_LIMIT_PER_SECOND,
    example: 20,
    description:
      'At most this many attempts start per second to this endpoint, counted across every worker process (test deliveries aside). ' +
      'The others wait for a later second; none is dropped. null (the default): no limit beyond ENDPOINT_CONCURRENCY.',
  })
  @ValidateIf((_dto: object, value: unknown) => value !== undefined && value !== null)
  @IsInt({ message: RATE_LIMIT_RULE })
  @Min(1, { message: RATE_LIMIT_RULE })
  @Max(MAX_RATE_LIMIT_PER_SECOND, { message: RATE_LIMIT_RULE })
  rateLimitPerSecond?: number | null;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    example: false,
    description:
      'Deliver one at a time, in publish (event id) order: a failing delivery holds the later ones back until it succeeds or ends failed. ' +
      'Applies to deliveries created after the change. Default false.',
  })
  @ValidateIf((_dto: object, value: unknown) => value !== undefined)
  @IsBoolean({ message: 'ordered must be a boolean' })
  ordered?: boolean;

  @ApiPropertyOptional({
    ...AUTH_INPUT_SCHEMA,
    nullable: true,
    description:
      'How Hookline authenticates to the receiver: HTTP Basic, a bearer token, or an OAuth2 access token of the client-credentials grant, ' +
      'sent as Authorization on every attempt (test deliveries too). Secret parts are stored encrypted and never returned. ' +
      'On PUT an object replaces the whole setting (secret included) and null removes it. Default null.',
  })
  @ValidateIf((_dto: object, value: unknown) => value !== undefined && value !== null)
  @Checked('receiverAuth', receiverAuthProblems)
  auth?: ReceiverAuth | null;

  @ApiPropertyOptional({
    ...TLS_INPUT_SCHEMA,
    description:
      'A client certificate for mutual TLS, and optionally a private authority to trust for the receiver. The key is stored encrypted ' +
      'and never returned. On PUT an object replaces the whole setting and null removes it. Default null.',
  })
  @ValidateIf((_dto: object, value: unknown) => value !== undefined && value !== null)
  @Checked('clientTls', (value) => clientTlsProblems(value))
  tls?: ClientTls | null;
}
