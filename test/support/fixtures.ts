import type { OrderEventData } from '../../src/catalogue/order-events';
import type { TestApp } from './app';

/** A valid order.created `data` (the documented order shape). */
export function orderData(n = 1): OrderEventData & Record<string, unknown> {
  return { id: `ord_${n}`, orderNumber: `ORD-${1000 + n}`, status: 'PENDING', total: 4998 + n, currency: 'EUR' };
}

export interface CreatedWebhook {
  id: string;
  secret: string;
  url: string;
  isActive: boolean;
}

export async function createWebhook(
  t: TestApp,
  url: string,
  events: string[] = ['order.created'],
  extra: Record<string, unknown> = {},
  key?: string,
): Promise<CreatedWebhook> {
  const res = await t.api('/webhooks', { method: 'POST', json: { name: `endpoint ${url}`, url, events, ...extra }, key });
  if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${await res.text()}`);
  return (await res.json()) as CreatedWebhook;
}

export interface Published {
  id: string;
  type: string;
  timestamp: string;
  deliveries: number;
}

export async function publish(
  t: TestApp,
  type: string,
  data: Record<string, unknown>,
  headers: Record<string, string> = {},
  key?: string,
): Promise<Published> {
  const res = await t.api('/events', { method: 'POST', json: { type, data }, headers, key });
  if (res.status !== 202 && res.status !== 200) throw new Error(`publish: ${res.status} ${await res.text()}`);
  return (await res.json()) as Published;
}

export interface DeliveryView {
  id: string;
  eventId: string;
  webhookId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  event?: { id: string; type: string; timestamp: string; data: Record<string, unknown> };
  attempts?: Array<{
    number: number;
    startedAt: string;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responseBody: string | null;
  }>;
}

export async function deliveriesOf(t: TestApp, webhookId: string, query = ''): Promise<DeliveryView[]> {
  const res = await t.api(`/webhooks/${webhookId}/deliveries${query}`);
  if (res.status !== 200) throw new Error(`list deliveries: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: DeliveryView[] }).data;
}

export async function delivery(t: TestApp, id: string): Promise<DeliveryView> {
  const res = await t.api(`/deliveries/${id}`);
  if (res.status !== 200) throw new Error(`get delivery: ${res.status} ${await res.text()}`);
  return (await res.json()) as DeliveryView;
}
