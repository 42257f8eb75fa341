import { type TestDatabase } from '../../../test/support/database';
import { createMigratedTestDatabase } from '../../../test/support/migrated-database';
import { newId } from '../../common/ids';
import type { AppConfig } from '../../config/app-config';
import type { SqlPool } from '../../database/sql-pool';
import { Metrics } from '../../observability/metrics';
import { DeliveryExpiry, expiredDeliveryError, expiryIntervalMs } from './delivery-expiry';
import { Pool } from 'pg';

describe('expiryIntervalMs', () => {
  it('checks six times within the age, from once a second to once every thirty', () => {
    expect(expiryIntervalMs(6_000)).toBe(1_000);
    expect(expiryIntervalMs(60_000)).toBe(10_000);
    expect(expiryIntervalMs(7 * 86_400_000)).toBe(30_000);
    expect(expiryIntervalMs(1_000)).toBe(1_000);
  });
});

/** Which pending deliveries one pass ends, against a real PostgreSQL (MAX_DELIVERY_AGE = 1 minute). */
describe('DeliveryExpiry', () => {
  const AGE_MS = 60_000;
  let db: TestDatabase;
  let pool: Pool;
  let metrics: Metrics;
  let expiry: DeliveryExpiry;

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    metrics = new Metrics();
    expiry = new DeliveryExpiry({ maxDeliveryAgeMs: AGE_MS } as AppConfig, pool as unknown as SqlPool, metrics);
    await db.query(
      `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ('wh_x', 'st_default', 'x', 'https://x.test/', '{order.created}', 's')`,
    );
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  interface Row {
    /** How long ago its event was published, in seconds. */
    eventAgo: number;
    status?: 'pending' | 'succeeded' | 'failed';
    /** Columns written as SQL. */
    nextAttemptAt?: string;
    createdAt?: string;
    restartedAt?: string;
    leaseToken?: string;
    ordered?: boolean;
  }

  /** A delivery as `row` describes; answers its id. */
  async function delivery(row: Row): Promise<string> {
    const at = Date.now() - row.eventAgo * 1_000;
    const eventId = newId('evt', at);
    const id = `del_${eventId.slice(4)}`;
    const createdAt = `coalesce(${row.createdAt ?? 'NULL'}, $3::timestamptz)`;
    if (row.status && row.status !== 'pending') {
      await db.query(
        `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count, created_at, restarted_at, ordered)
         VALUES ($1, 'st_default', $2, 'wh_x', 'order.created', '${row.status}', 1, ${createdAt}, ${row.restartedAt ?? 'NULL'}, $4)`,
        [id, eventId, new Date(at).toISOString(), row.ordered ?? false],
      );
      return id;
    }
    // A leased delivery's `nextAttemptAt` is its lease's end, as the deliveries view shows it; it came due before.
    const due = row.leaseToken ? `now() - interval '1 minute'` : (row.nextAttemptAt ?? 'now()');
    const leaseUntil = row.leaseToken ? (row.nextAttemptAt ?? 'now()') : 'NULL';
    await db.query(
      `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, lease_until, created_at, restarted_at, lease_token, ordered)
       VALUES ($1, 'st_default', $2, 'wh_x', 'order.created', ${due}, ${leaseUntil}, ${createdAt}, ${row.restartedAt ?? 'NULL'}, $4, $5)`,
      [id, eventId, new Date(at).toISOString(), row.leaseToken ?? null, row.ordered ?? false],
    );
    return id;
  }

  async function statusOf(id: string): Promise<{ status: string; lastError: string | null; due: Date | null; leased: boolean }> {
    const [row] = await db.query<{ status: string; lastError: string | null; due: Date | null; leased: boolean }>(
      `SELECT status, last_error AS "lastError", next_attempt_at AS due, lease_token IS NOT NULL AS leased FROM deliveries WHERE id = $1`,
      [id],
    );
    return row;
  }

  it('ends pending deliveries older than the age whatever holds them back, and leaves the young, the finished and those in flight', async () => {
    const expired = {
      due: await delivery({ eventAgo: 120 }),
      retryLater: await delivery({ eventAgo: 120, nextAttemptAt: `now() + interval '1 hour'` }),
      orderedHeld: await delivery({ eventAgo: 120, nextAttemptAt: 'NULL', ordered: true }),
      leaseRanOut: await delivery({ eventAgo: 120, nextAttemptAt: `now() - interval '1 second'`, leaseToken: 'dead-worker' }),
    };
    const kept = {
      young: await delivery({ eventAgo: 30 }),
      inFlight: await delivery({ eventAgo: 120, nextAttemptAt: `now() + interval '30 seconds'`, leaseToken: 'busy-worker' }),
      replayedLately: await delivery({ eventAgo: 120, createdAt: `now() - interval '10 seconds'` }),
      retriedLately: await delivery({ eventAgo: 120, restartedAt: `now() - interval '10 seconds'` }),
      succeeded: await delivery({ eventAgo: 120, status: 'succeeded', nextAttemptAt: 'NULL' }),
      failed: await delivery({ eventAgo: 120, status: 'failed', nextAttemptAt: 'NULL' }),
    };

    expect(await expiry.run()).toBe(4);
    for (const id of Object.values(expired)) {
      expect(await statusOf(id)).toEqual({ status: 'failed', lastError: expiredDeliveryError(AGE_MS), due: null, leased: false });
    }
    for (const id of Object.values(kept)) expect((await statusOf(id)).lastError).toBeNull();
    expect((await statusOf(kept.young)).status).toBe('pending');
    expect((await statusOf(kept.inFlight)).leased).toBe(true);
    expect(expiredDeliveryError(AGE_MS)).toBe('expired: still pending 1m after its event (MAX_DELIVERY_AGE); retry it to send it again');
    expect((await metrics.registry.getSingleMetricAsString('hookline_deliveries_expired_total')).split('\n')).toContain(
      'hookline_deliveries_expired_total 4',
    );
    expect(await expiry.run()).toBe(0);
  });

  it('ends a backlog larger than one statement in several', async () => {
    for (let i = 0; i < 7; i++) await delivery({ eventAgo: 200 + i });
    expect(await expiry.run(3)).toBe(7);
    const [{ pending }] = await db.query<{ pending: number }>(
      `SELECT count(*)::int AS pending FROM deliveries WHERE status = 'pending' AND id < $1`,
      [`del_${newId('evt', Date.now() - 190_000).slice(4, 14)}`],
    );
    expect(pending).toBe(0);
  });
});
