import { randomBytes } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { newId } from '../../src/common/ids';
import { DELIVERIES_CHANNEL } from '../../src/dispatch/store/deliveries-channel';
import { EVENT_CATALOGUE, EventType } from '../../src/catalogue/event-catalogue';
import { buildEnvelope } from '../../src/catalogue/envelope';

/** application_name of the orchestrator's own connections (left out of Hookline's PostgreSQL CPU). */
export const BENCH_APPLICATION_NAME = 'hookline-bench';

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export interface BenchDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

/** Runs one statement on the server's maintenance database. */
export async function adminQuery<T = Record<string, unknown>>(serverUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const pool = new Pool({ connectionString: withDatabase(serverUrl, 'postgres'), max: 1, application_name: BENCH_APPLICATION_NAME });
  try {
    return (await pool.query(sql, params)).rows as T[];
  } finally {
    await pool.end();
  }
}

/** A fresh database `hookline_bench_<random><suffix>` on the server of DATABASE_URL. */
export async function createDatabase(serverUrl: string, suffix = ''): Promise<BenchDatabase> {
  const name = `hookline_bench_${randomBytes(5).toString('hex')}${suffix}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = withDatabase(serverUrl, name);
  const pool = new Pool({ connectionString: url, max: 4, application_name: BENCH_APPLICATION_NAME });
  pool.on('error', () => undefined);
  let dropped = false;
  return {
    name,
    url,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end().catch(() => undefined);
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Runs `work` in one transaction on a client of `pool`, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export interface BulkPublish {
  storeId: string;
  type: EventType;
  webhookIds: string[];
  events: number;
  /** Events per transaction. */
  batchEvents: number;
  /** NOTIFY the workers on each commit, as EventPublisher does. */
  notify: boolean;
  /** Due this many seconds from now instead of at once (a backlog released later by {@link releaseDeliveries}). */
  dueInSeconds?: number;
  /** The deliveries are for ordered endpoints (as EventPublisher marks them). */
  ordered?: boolean;
}

/**
 * Writes events and their pending deliveries straight into the tables, in large transactions: the
 * rows EventPublisher writes (an envelope built by src/catalogue/envelope.ts, one delivery per
 * endpoint, due now), minus the HTTP API in front of it.
 */
export async function bulkPublish(pool: Pool, spec: BulkPublish): Promise<{ ms: number; deliveries: number }> {
  const started = performance.now();
  const example = EVENT_CATALOGUE[spec.type].example;
  let deliveries = 0;
  for (let done = 0; done < spec.events; done += spec.batchEvents) {
    const count = Math.min(spec.batchEvents, spec.events - done);
    const eventIds: string[] = [];
    const bodies: string[] = [];
    const createdAt: string[] = [];
    const deliveryIds: string[] = [];
    const deliveryEvents: string[] = [];
    const deliveryWebhooks: string[] = [];
    for (let i = 0; i < count; i++) {
      const { envelope, body } = buildEnvelope(spec.type, example);
      eventIds.push(envelope.id);
      bodies.push(body);
      createdAt.push(envelope.timestamp);
      for (const webhookId of spec.webhookIds) {
        deliveryIds.push(newId('del'));
        deliveryEvents.push(envelope.id);
        deliveryWebhooks.push(webhookId);
      }
    }
    await inTransaction(pool, async (client) => {
      await client.query(
        `INSERT INTO events (id, store_id, type, body, created_at)
         SELECT u.id, $1, $2, u.body, u.created_at FROM unnest($3::text[], $4::text[], $5::timestamptz[]) AS u(id, body, created_at)`,
        [spec.storeId, spec.type, eventIds, bodies, createdAt],
      );
      await client.query(
        `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
         SELECT u.id, $1, u.event_id, u.webhook_id, $2, now() + make_interval(secs => $6), $7
         FROM unnest($3::text[], $4::text[], $5::text[]) AS u(id, event_id, webhook_id)`,
        [spec.storeId, spec.type, deliveryIds, deliveryEvents, deliveryWebhooks, spec.dueInSeconds ?? 0, spec.ordered ?? false],
      );
      if (spec.notify) await client.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, '']);
    });
    deliveries += deliveryIds.length;
  }
  return { ms: Math.round(performance.now() - started), deliveries };
}

/** Makes one type's pending deliveries due now and wakes the workers, as a publish would. */
export async function releaseDeliveries(pool: Pool, eventType: string): Promise<number> {
  return inTransaction(pool, async (client) => {
    const { rowCount } = await client.query(
      `UPDATE delivery_queue SET next_attempt_at = now() WHERE event_type = $1 AND next_attempt_at > now()`,
      [eventType],
    );
    await client.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, '']);
    return rowCount ?? 0;
  });
}

/** Deliveries of one event type by status. */
export async function statusCounts(pool: Pool, eventType: string): Promise<Record<string, number>> {
  const rows = (
    await pool.query<{ status: string; count: number }>(
      'SELECT status, count(*)::int AS count FROM deliveries WHERE event_type = $1 GROUP BY status',
      [eventType],
    )
  ).rows;
  return Object.fromEntries(rows.map((row) => [row.status, row.count]));
}

/** Attempts of one event type's deliveries by outcome ('ok' or the error text), for diagnosis. */
export async function attemptOutcomes(pool: Pool, eventType: string): Promise<Record<string, number>> {
  const rows = (
    await pool.query<{ outcome: string; count: number }>(
      `SELECT coalesce(left(a.error, 60), 'ok') AS outcome, count(*)::int AS count
       FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
       WHERE d.event_type = $1 GROUP BY 1 ORDER BY 2 DESC`,
      [eventType],
    )
  ).rows;
  return Object.fromEntries(rows.map((row) => [row.outcome, row.count]));
}
