import { validateEventData } from './event-catalogue';
import { MAX_LAST_ERROR_LENGTH } from './webhook-events';
import { deliveryFailedEvent, webhookDisabledEvent } from './operational-events';

const delivery = { id: 'del_1', webhookId: 'wh_1', eventId: 'evt_1', eventType: 'order.created', attemptNumber: 3 };

describe('deliveryFailedEvent', () => {
  it('builds a valid webhook.delivery_failed envelope from the delivery and its last attempt', () => {
    const at = new Date('2026-11-25T10:00:00.000Z');
    const event = deliveryFailedEvent(delivery, { statusCode: 503, error: 'HTTP 503' }, at)!;
    const envelope = JSON.parse(event.body) as { id: string; type: string; timestamp: string; data: unknown };
    expect(Object.keys(envelope)).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(envelope).toEqual({
      id: event.id,
      type: 'webhook.delivery_failed',
      timestamp: '2026-11-25T10:00:00.000Z',
      data: {
        deliveryId: 'del_1',
        webhookId: 'wh_1',
        eventId: 'evt_1',
        eventType: 'order.created',
        attemptCount: 3,
        lastStatusCode: 503,
        lastError: 'HTTP 503',
      },
    });
    expect(event.id).toMatch(/^evt_/);
    expect(event.createdAt).toBe(at);
    expect(validateEventData('webhook.delivery_failed', envelope.data)).toEqual([]);
  });

  it('gives null for an attempt without an answer or a message, and cuts a long error', () => {
    const event = deliveryFailedEvent(delivery, { statusCode: null, error: 'x'.repeat(5_000) })!;
    const { data } = JSON.parse(event.body) as { data: { lastStatusCode: unknown; lastError: string } };
    expect(data.lastStatusCode).toBeNull();
    expect(data.lastError).toHaveLength(MAX_LAST_ERROR_LENGTH);
    expect(validateEventData('webhook.delivery_failed', data)).toEqual([]);
  });

  it('answers nothing for a delivery of an operational event', () => {
    for (const eventType of ['webhook.disabled', 'webhook.delivery_failed']) {
      expect(deliveryFailedEvent({ ...delivery, eventType }, { statusCode: 500, error: 'HTTP 500' })).toBeUndefined();
    }
  });
});

describe('webhookDisabledEvent', () => {
  const endpoint = { id: 'wh_1', name: 'ERP', url: 'https://erp.test/hook', disabledAt: new Date('2026-11-25T10:00:00.000Z') };

  it.each(['failing', 'gone'] as const)('builds a valid webhook.disabled envelope for %s', (reason) => {
    const event = webhookDisabledEvent({ ...endpoint, disabledReason: reason })!;
    const envelope = JSON.parse(event.body) as { type: string; data: unknown };
    expect(envelope).toMatchObject({
      type: 'webhook.disabled',
      data: { webhookId: 'wh_1', name: 'ERP', url: 'https://erp.test/hook', reason, disabledAt: '2026-11-25T10:00:00.000Z' },
    });
    expect(validateEventData('webhook.disabled', envelope.data)).toEqual([]);
  });

  it('answers nothing when a person disabled it', () => {
    expect(webhookDisabledEvent({ ...endpoint, disabledReason: 'manual' })).toBeUndefined();
    expect(webhookDisabledEvent({ ...endpoint, disabledReason: null })).toBeUndefined();
  });
});
