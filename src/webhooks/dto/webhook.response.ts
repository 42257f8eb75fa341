import { ApiProperty } from '@nestjs/swagger';
import { EVENT_TYPES, type EventType } from '../../catalogue/event-catalogue';
import type { Webhook } from '../webhook.entity';

export class WebhookResponse {
  @ApiProperty({ example: 'wh_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({ example: 'ERP order sync' })
  name: string;

  @ApiProperty({ example: 'https://erp.example.com/hooks/store' })
  url: string;

  @ApiProperty({ enum: EVENT_TYPES, isArray: true, example: ['order.created'] })
  events: EventType[];

  @ApiProperty({ example: true })
  isActive: boolean;

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
      isActive: webhook.isActive,
      createdAt: webhook.createdAt.toISOString(),
      updatedAt: webhook.updatedAt.toISOString(),
    };
  }
}

/** Create and rotate-secret only: the one time the signing secret is shown. */
export class WebhookWithSecretResponse extends WebhookResponse {
  @ApiProperty({
    example: 'whsec_x5Yc1mB0vVfQ2m3x0gZc6k3gYb6Q2m9yq7Y0q1m2n3o',
    description: 'Signing secret. Shown only in this response; the HMAC key is this whole string.',
  })
  secret: string;
}
