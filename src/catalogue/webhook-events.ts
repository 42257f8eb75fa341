import { CountField, EnumField, IdField, TextField, TimestampField } from './data-shape';

/** Why Hookline disabled an endpoint by itself (a person's disabling, `manual`, sends no event). */
export const AUTOMATIC_DISABLE_REASONS = ['failing', 'gone'] as const;
export type AutomaticDisableReason = (typeof AUTOMATIC_DISABLE_REASONS)[number];

/** The longest `lastError` an operational event carries (the delivery log keeps the whole of it). */
export const MAX_LAST_ERROR_LENGTH = 1000;

/** `data` of webhook.disabled: Hookline disabled one of the store's endpoints. */
export class WebhookDisabledData {
  @IdField({ description: 'Identifier of the endpoint disabled.', example: 'wh_01jd3v8k2m9q4r7s6t5v4w3x2y' })
  webhookId: string;

  @TextField({ description: 'Name of the endpoint disabled.', example: 'ERP order sync' })
  name: string;

  @TextField({ description: 'URL of the endpoint disabled.', example: 'https://erp.example.com/hooks/orders', maxLength: 2048 })
  url: string;

  @EnumField({
    values: AUTOMATIC_DISABLE_REASONS,
    description:
      '`failing`: no attempt succeeded for ENDPOINT_DISABLE_AFTER_MS while enough deliveries ended failed; `gone`: the endpoint answered 410 Gone.',
    example: 'failing',
  })
  reason: AutomaticDisableReason;

  @TimestampField({ description: 'When it was disabled.', example: '2026-11-23T09:00:00.000Z' })
  disabledAt: string;
}

/** `data` of webhook.delivery_failed: a delivery to one of the store's endpoints ended `failed`. */
export class WebhookDeliveryFailedData {
  @IdField({ description: 'Identifier of the delivery (GET /deliveries/:id shows its attempts).', example: 'del_01jd3v9a7c4e2g6h' })
  deliveryId: string;

  @IdField({ description: 'Identifier of the endpoint it was for.', example: 'wh_01jd3v8k2m9q4r7s6t5v4w3x2y' })
  webhookId: string;

  @IdField({ description: 'Identifier of the event it carried.', example: 'evt_01jd3v9a7c4e2g6h' })
  eventId: string;

  @TextField({ description: 'Type of the event it carried.', example: 'order.created', maxLength: 64 })
  eventType: string;

  @CountField({ description: 'Attempts made over the delivery’s life.', example: 3, minimum: 1 })
  attemptCount: number;

  @CountField({
    description: 'HTTP status of the last attempt; null when there was no answer (timeout, refused connection).',
    example: 500,
    nullable: true,
  })
  lastStatusCode: number | null;

  @TextField({
    description: `Why the last attempt failed, at most ${MAX_LAST_ERROR_LENGTH} characters; null when it has no message.`,
    example: 'HTTP 500',
    maxLength: MAX_LAST_ERROR_LENGTH,
    nullable: true,
  })
  lastError: string | null;
}
