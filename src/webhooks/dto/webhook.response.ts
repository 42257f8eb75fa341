import { ApiProperty } from '@nestjs/swagger';
import type { DisabledReason } from '../webhook.entity';
import { EVENT_TYPES, type EventType } from '../../catalogue/event-catalogue';
import type { Webhook } from '../webhook.entity';
import { showHeaders } from '../sensitive-headers';
import { FILTER_EXAMPLE } from './content-filter.dto';
import type { ShownAuth, ShownTls } from '../receiver-credentials';
import { AUTH_RESPONSE_SCHEMA, TLS_RESPONSE_SCHEMA } from './receiver-auth.dto';

export class SecretRotationResponse {
  @ApiProperty({ example: '2026-11-23T10:00:00.000Z', description: 'Until then deliveries are signed with both secrets' })
  oldSecretExpiresAt: string;
}

export class WebhookResponse {
  @ApiProperty({ example: 'wh_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({ example: 'ERP order sync' })
  name: string;

  @ApiProperty({ example: 'https://erp.example.com/hooks/store' })
  url: string;

  @ApiProperty({ enum: EVENT_TYPES, isArray: true, example: ['order.created'] })
  events: EventType[];

  @ApiProperty({
    type: String,
    nullable: true,
    example: FILTER_EXAMPLE,
    description:
      'The content filter as given: only events it matches are delivered here (docs/api.md#content-filters); null: every event of its types',
  })
  filter: string | null;

  @ApiProperty({ example: true })
  isActive: boolean;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true },
    example: { Authorization: null, 'X-Store': 'berlin-1' },
    description:
      'Extra request headers sent with every attempt. The value of a sensitive header (listed in sensitiveHeaders) is never returned: it reads null.',
  })
  headers: Record<string, string | null>;

  @ApiProperty({
    type: [String],
    example: ['Authorization'],
    description:
      'The headers whose values are kept secret: Authorization, Proxy-Authorization, Cookie and any name containing key, token, secret, auth, ' +
      'password or signature (in any case). Their values are stored encrypted and sent with every attempt, but never returned.',
  })
  sensitiveHeaders: string[];

  @ApiProperty({ type: [Number], nullable: true, example: null, description: "null: the deployment's RETRY_SCHEDULE_MS" })
  retrySchedule: number[] | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: null,
    description: 'At most this many attempts per second across every worker; null: no limit',
  })
  rateLimitPerSecond: number | null;

  @ApiProperty({ example: false, description: 'Deliveries go one at a time, in publish order' })
  ordered: boolean;

  @ApiProperty({
    ...AUTH_RESPONSE_SCHEMA,
    nullable: true,
    example: {
      type: 'oauth2',
      tokenUrl: 'https://auth.erp.example.com/oauth/token',
      clientId: 'hookline-berlin',
      scope: null,
      audience: null,
    },
    description:
      'How Hookline authenticates to the receiver: the method and its non-secret fields (never a password, token or client secret); null: none',
  })
  auth: ShownAuth | null;

  @ApiProperty({
    ...TLS_RESPONSE_SCHEMA,
    description: 'The client certificate of mutual TLS, summarised; null: none',
  })
  tls: ShownTls | null;

  @ApiProperty({
    enum: ['manual', 'gone', 'failing'],
    nullable: true,
    example: 'gone',
    description: 'Why the endpoint is inactive: a PUT {isActive: false}, a 410 Gone answer, or failing for too long. null while active.',
  })
  disabledReason: DisabledReason | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-11-23T10:00:00.000Z',
    description: 'When it was disabled; null while active',
  })
  disabledAt: string | null;

  @ApiProperty({
    type: SecretRotationResponse,
    nullable: true,
    example: { oldSecretExpiresAt: '2026-11-23T10:00:00.000Z' },
    description: 'Set while the previous secret still signs beside the new one; null otherwise',
  })
  secretRotation: SecretRotationResponse | null;

  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' })
  updatedAt: string;

  static of(webhook: Webhook): WebhookResponse {
    return {
      id: webhook.id,
      name: webhook.name,
      url: webhook.url,
      events: webhook.events,
      filter: webhook.filter ?? null,
      isActive: webhook.isActive,
      ...showHeaders(webhook.headers),
      retrySchedule: webhook.retrySchedule,
      rateLimitPerSecond: webhook.rateLimitPerSecond,
      ordered: webhook.ordered,
      auth: webhook.auth ?? null,
      tls: webhook.tls ?? null,
      disabledReason: webhook.disabledReason,
      disabledAt: webhook.disabledAt?.toISOString() ?? null,
      secretRotation:
        webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt.getTime() > Date.now()
          ? { oldSecretExpiresAt: webhook.previousSecretExpiresAt.toISOString() }
          : null,
      createdAt: webhook.createdAt.toISOString(),
      updatedAt: webhook.updatedAt.toISOString(),
    };
  }
}

/** Create and rotate-secret only: the one time the signing secret is shown. */
export class WebhookWithSecretResponse extends WebhookResponse {
  @ApiProperty({
    example: 'whsec_x5Yc1mB0vVfQ2m3x0gZc6k3gYb6Q2m9yq7Y0q1m2n3o',
    description:
      'Signing secret: whsec_ and 32 random bytes in base64. Shown only in this response. X-Webhook-Signature is keyed with this whole string; ' +
      'webhook-signature (Standard Webhooks) with the bytes after whsec_, base64-decoded.',
  })
  secret: string;
}
