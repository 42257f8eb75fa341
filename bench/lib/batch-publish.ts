import type { EventType } from '../../src/catalogue/event-catalogue';
import { EVENT_CATALOGUE } from '../../src/catalogue/event-catalogue';
import { ADMIN_KEY, ENDPOINTS } from './config';

/** Events per POST /events/batch: its maximum. */
export const BATCH_EVENTS = 1000;

export interface BatchPublish {
  baseUrl: string;
  type: EventType;
  events: number;
  /** Events per request (POST /events/batch takes up to 1,000). */
  batchEvents: number;
  /** Requests in flight at once. */
  inFlight: number;
  /** The publishing store's key (default: the admin key, st_default). */
  apiKey?: string;
}

export interface BatchPublished {
  /** From the first request sent to the last answer. */
  ms: number;
  events: number;
  /** Deliveries enqueued, as the answers count them. */
  deliveries: number;
  requests: number;
}

/**
 * Publishes `events` events of `type` (its catalogue example) through POST /events/batch, as a
 * producer with a backlog would: full batches, `inFlight` requests at a time. Every answer must
 * be a 202 holding one entry per event. The bodies are built once: the server gives each event
 * its own id and time.
 */
export async function batchPublish(spec: BatchPublish): Promise<BatchPublished> {
  const url = `${spec.baseUrl}/api/v1/external/events/batch`;
  const event = { type: spec.type, data: EVENT_CATALOGUE[spec.type].example };
  const bodyOf = (n: number): string => JSON.stringify({ events: Array.from({ length: n }, () => event) });
  const full = bodyOf(spec.batchEvents);
  const sizes: number[] = [];
  for (let left = spec.events; left > 0; left -= spec.batchEvents) sizes.push(Math.min(left, spec.batchEvents));
  let deliveries = 0;
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < sizes.length) {
      const size = sizes[next++];
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'x-api-key': spec.apiKey ?? ADMIN_KEY, 'content-type': 'application/json' },
        body: size === spec.batchEvents ? full : bodyOf(size),
      });
      const text = await response.text();
      if (response.status !== 202) throw new Error(`POST /events/batch → ${response.status} ${text.slice(0, 300)}`);
      const { data } = JSON.parse(text) as { data: Array<{ deliveries: number }> };
      if (data.length !== size) throw new Error(`POST /events/batch answered ${data.length} entries for ${size} events`);
      for (const entry of data) deliveries += entry.deliveries;
    }
  };
  await Promise.all(Array.from({ length: Math.min(spec.inFlight, sizes.length) }, worker));
  return { ms: Math.round(performance.now() - started), events: spec.events, deliveries, requests: sizes.length };
}

/**
 * Publishes `events` events of `type` to the benchmark's endpoints as the throughput scenario
 * does (full batches, 2 requests in flight); throws unless each event reached every endpoint.
 */
export async function publishToEndpoints(baseUrl: string, type: EventType, events: number): Promise<BatchPublished> {
  const published = await batchPublish({ baseUrl, type, events, batchEvents: BATCH_EVENTS, inFlight: 2 });
  const total = events * ENDPOINTS;
  if (published.deliveries !== total) throw new Error(`the batches enqueued ${published.deliveries} deliveries, not ${total}`);
  return published;
}
