import { isOperationalEventType } from './event-catalogue';
import { MAX_LAST_ERROR_LENGTH, type WebhookDeliveryFailedData, type WebhookDisabledData } from './webhook-events';
import { buildEnvelope } from './envelope';

/** An operational event ready to be written: its id, time and exact body. */
export interface OperationalEvent {
  id: string;
  createdAt: Date;
  body: string;
}

/**
 * The webhook.delivery_failed event of a delivery that has just ended `failed` after an attempt,
 * or undefined when that delivery carried an operational event itself: telling of its failure
 * could fail in turn, and so on without end.
 */
export function deliveryFailedEvent(
  delivery: { id: string; webhookId: string; eventId: string; eventType: string; attemptNumber: number },
  last: { statusCode: number | null; error: string | null },
  at = new Date(),
): OperationalEvent | undefined {
  if (isOperationalEventType(delivery.eventType)) return undefined;
  const data: WebhookDeliveryFailedData = {
    deliveryId: delivery.id,
    webhookId: delivery.webhookId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    attemptCount: delivery.attemptNumber,
    lastStatusCode: last.statusCode,
    lastError: last.error === null || last.error === '' ? null : last.error.slice(0, MAX_LAST_ERROR_LENGTH),
  };
  const { envelope, body } = buildEnvelope('webhook.delivery_failed', data, at);
  return { id: envelope.id, createdAt: at, body };
}

/** The fields of a just-disabled endpoint that its webhook.disabled event tells. */
export interface DisabledEndpoint {
  id: string;
  name: string;
  url: string;
  disabledReason: string | null;
  disabledAt: Date | null;
}

/** The webhook.disabled event of an endpoint Hookline has just disabled (a person's `manual` disabling has none). */
export function webhookDisabledEvent(endpoint: DisabledEndpoint): OperationalEvent | undefined {
  const reason = endpoint.disabledReason;
  if (reason !== 'failing' && reason !== 'gone') return undefined;
  const disabledAt = endpoint.disabledAt ?? new Date();
  const data: WebhookDisabledData = {
    webhookId: endpoint.id,
    name: endpoint.name,
    url: endpoint.url,
    reason,
    disabledAt: disabledAt.toISOString(),
  };
  const at = new Date();
  const { envelope, body } = buildEnvelope('webhook.disabled', data, at);
  return { id: envelope.id, createdAt: at, body };
}
