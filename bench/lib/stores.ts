import type { Pool } from 'pg';
import { DELIVERIES_CHANNEL } from '../../src/dispatch/store/deliveries-channel';
import { newId } from '../../src/common/ids';
import { EVENT_CATALOGUE, type EventType } from '../../src/catalogue/event-catalogue';
import { buildEnvelope } from '../../src/catalogue/envelope';
import { generateSigningSecret, SecretCipher } from '../../src/webhooks/secret-cipher';
import { ENCRYPTION_KEY } from './config';
import { inTransaction } from './db';

export interface BenchStore {
  id: string;
  webhookIds: string[];
}

export interface StoresSpec {
  stores: number;
  endpointsPerStore: number;
  type: EventType;
  /** The URL of endpoint `endpoint` of store `store` (both counted from 0). */
  url: (store: number, endpoint: number) => string;
}

/**
 * Stores and their endpoints written straight into the tables, as the API would write them (a
 * signing secret sealed with the benchmark's key, bound to its endpoint's id): thousands of them
 * in one statement each, where the API would take a request per endpoint.
 */
export async function createStores(pool: Pool, spec: StoresSpec): Promise<BenchStore[]> {
  const cipher = new SecretCipher(Buffer.from(ENCRYPTION_KEY, 'base64'));
  const stores: BenchStore[] = [];
  const rows = { store: [] as string[], id: [] as string[], url: [] as string[], secret: [] as string[] };
  for (let s = 0; s < spec.stores; s++) {
    const store: BenchStore = { id: newId('st'), webhookIds: [] };
    for (let e = 0; e < spec.endpointsPerStore; e++) {
      const id = newId('wh');
      store.webhookIds.push(id);
      rows.store.push(store.id);
      rows.id.push(id);
      rows.url.push(spec.url(s, e));
      rows.secret.push(cipher.encrypt(generateSigningSecret(), id));
    }
    stores.push(store);
  }
  await pool.query(`INSERT INTO stores (id, name) SELECT id, 'bench ' || id FROM unnest($1::text[]) AS s(id)`, [stores.map((s) => s.id)]);
  await pool.query(
    `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted)
     SELECT w.id, w.store_id, 'bench ' || w.id, w.url, ARRAY[$5], w.secret FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS w(id, store_id, url, secret)`,
    [rows.id, rows.store, rows.url, rows.secret, spec.type],
  );
  return stores;
}

/** Makes every endpoint of these stores inactive and ends their waiting deliveries, as a PUT isActive:false would. */
export async function disableStores(pool: Pool, stores: BenchStore[]): Promise<void> {
  const ids = stores.map((s) => s.id);
  await pool.query(`UPDATE webhooks SET is_active = false WHERE store_id = ANY ($1::text[])`, [ids]);
  await pool.query(
    `WITH ended AS (DELETE FROM delivery_queue WHERE store_id = ANY ($1::text[]) RETURNING *)
     INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count, last_error, created_at, ordered)
     SELECT id, store_id, event_id, webhook_id, event_type, 'failed', attempt_count, 'benchmark: endpoint disabled', created_at, ordered
     FROM ended`,
    [ids],
  );
}

/**
 * `eventsPerStore` events of `type` for each store, each with a pending delivery to every endpoint
 * of its store, written straight into the tables as bulkPublish does for one store; the stores'
 * events alternate, as many stores publishing at once would. Due `dueInSeconds` from now (a
 * backlog released later by releaseDeliveries), at once by default.
 */
export async function bulkPublishStores(
  pool: Pool,
  stores: BenchStore[],
  spec: { type: EventType; eventsPerStore: number; dueInSeconds?: number },
): Promise<{ ms: number; deliveries: number }> {
  const started = performance.now();
  const example = EVENT_CATALOGUE[spec.type].example;
  let events = { id: [] as string[], store: [] as string[], body: [] as string[], createdAt: [] as string[] };
  let rows = { id: [] as string[], store: [] as string[], event: [] as string[], webhook: [] as string[] };
  let deliveries = 0;
  const flush = async (): Promise<void> => {
    if (events.id.length === 0) return;
    await inTransaction(pool, async (client) => {
      await client.query(
        `INSERT INTO events (id, store_id, type, body, created_at)
         SELECT u.id, u.store_id, $1, u.body, u.created_at
         FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS u(id, store_id, body, created_at)`,
        [spec.type, events.id, events.store, events.body, events.createdAt],
      );
      await client.query(
        `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
         SELECT u.id, u.store_id, u.event_id, u.webhook_id, $1, now() + make_interval(secs => $6)
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, store_id, event_id, webhook_id)`,
        [spec.type, rows.id, rows.store, rows.event, rows.webhook, spec.dueInSeconds ?? 0],
      );
    });
    deliveries += rows.id.length;
    events = { id: [], store: [], body: [], createdAt: [] };
    rows = { id: [], store: [], event: [], webhook: [] };
  };
  for (let n = 0; n < spec.eventsPerStore; n++) {
    for (const store of stores) {
      const { envelope, body } = buildEnvelope(spec.type, example);
      events.id.push(envelope.id);
      events.store.push(store.id);
      events.body.push(body);
      events.createdAt.push(envelope.timestamp);
      for (const webhookId of store.webhookIds) {
        rows.id.push(newId('del'));
        rows.store.push(store.id);
        rows.event.push(envelope.id);
        rows.webhook.push(webhookId);
      }
      if (rows.id.length >= 20_000) await flush();
    }
  }
  await flush();
  return { ms: Math.round(performance.now() - started), deliveries };
}

/** Makes the stores' deliveries due now and wakes the workers, as their publishes would. */
export async function releaseStores(pool: Pool, stores: BenchStore[]): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(`UPDATE delivery_queue SET next_attempt_at = now() WHERE store_id = ANY ($1::text[])`, [stores.map((s) => s.id)]);
    await client.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, '']);
  });
}
