import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { timeDigits } from '../../common/ids';
import type { AppConfig } from '../../config/app-config';
import { dataSourceOptions } from '../../database/data-source-options';
import { runMigrationsLocked } from '../../database/run-migrations';
import { DeliveryLog } from './delivery-log.repository';
import { DeliveryRepository, type AttemptOutcome, type ClaimedDelivery } from './delivery.repository';

const NO_LIMITS = { excluded: [], partial: new Map(), perEndpoint: 100, excludedStores: [], partialStores: new Map(), perStore: 100 };

/** Ids in the layout Hookline makes, so that they fall in today's partitions. */
const TODAY = timeDigits(Date.now());

/** Ordered endpoints and rate limits as the claim and the recorded outcomes enforce them, against a real PostgreSQL. */
describe('DeliveryRepository flow control', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let pool: Pool;
  /** Two workers, each on its own connections. */
  let workers: [DeliveryRepository, DeliveryRepository];
  let otherPool: Pool;
  let log: DeliveryLog;
  let sequence = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(dataSource);
    pool = new Pool({ connectionString: db.url, max: 2 });
    otherPool = new Pool({ connectionString: db.url, max: 2 });
    workers = [new DeliveryRepository(pool), new DeliveryRepository(otherPool)];
    log = new DeliveryLog(dataSource, { retentionDays: 30, maxAttemptsPerDelivery: 100 } as AppConfig);
    for (const [id, settings] of [
      ['wh_ordered', 'ordered = true'],
      ['wh_limited', 'rate_limit_per_second = 2'],
      ['wh_free', 'ordered = false'],
    ]) {
      await db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ($1, 'st_default', $1, 'https://x.test/', '{order.created}', 'sealed')`,
        [id],
      );
      await db.query(`UPDATE webhooks SET ${settings} WHERE id = $1`, [id]);
    }
  });

  afterAll(async () => {
    await pool.end();
    await otherPool.end();
    await dataSource.destroy();
    await db.drop();
  });

  beforeEach(async () => {
    await db.query('DELETE FROM delivery_queue; DELETE FROM delivery_log');
    await db.query('DELETE FROM endpoint_rate_windows');
  });

  /** A due delivery of a new event; events are numbered so that their ids sort in creation order. */
  async function due(webhookId: string, ordered = false): Promise<string> {
    const n = `${TODAY}${String(++sequence).padStart(16, '0')}`;
    await db.query(`INSERT INTO events (id, store_id, type, body) VALUES ($1, 'st_default', 'order.created', '{}')`, [`evt_${n}`]);
    await db.query(
      `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
       VALUES ($1, 'st_default', $2, $3, 'order.created', now() - interval '1 second', $4)`,
      [`del_${n}`, `evt_${n}`, webhookId, ordered],
    );
    return `del_${n}`;
  }

  async function claim(worker = workers[0], token = 'worker'): Promise<ClaimedDelivery[]> {
    return (await worker.claimDue(100, 10_000, token, NO_LIMITS)).deliveries;
  }

  function ended(delivery: ClaimedDelivery, status: 'succeeded' | 'failed' | 'pending', token = 'worker'): AttemptOutcome {
    return {
      deliveryId: delivery.id,
      leaseToken: token,
      attempt: {
        number: delivery.attemptNumber,
        trigger: 'scheduled',
        startedAt: new Date(),
        durationMs: 1,
        statusCode: status === 'succeeded' ? 200 : 500,
        error: null,
        responseBody: null,
      },
      status,
      retryDelayMs: 0,
      decidedAt: Date.now(),
      lastStatusCode: status === 'succeeded' ? 200 : 500,
      lastError: null,
    };
  }

  async function nextAttemptAt(id: string): Promise<Date | null> {
    const [row] = await db.query<{ next_attempt_at: Date | null }>('SELECT next_attempt_at FROM deliveries WHERE id = $1', [id]);
    return row.next_attempt_at;
  }

  describe('an ordered endpoint', () => {
    it('sends only the earliest pending delivery and holds the later ones out of the due index', async () => {
      const [first, second, third] = [await due('wh_ordered', true), await due('wh_ordered', true), await due('wh_ordered', true)];
      const free = await due('wh_free');
      const claimed = await claim();
      expect(claimed.map((d) => d.id).sort()).toEqual([first, free].sort());
      expect(claimed.find((d) => d.id === first)?.ordered).toBe(true);
      expect(await nextAttemptAt(second)).toBeNull();
      expect(await nextAttemptAt(third)).toBeNull();
      // Another worker finds nothing while the first one is in flight.
      expect(await claim(workers[1], 'other')).toEqual([]);
    });

    it('keeps holding the later ones through a failed attempt, and releases the next when the first succeeds', async () => {
      const [first, second] = [await due('wh_ordered', true), await due('wh_ordered', true)];
      const [sent] = await claim();
      await workers[0].recordOutcomes([ended(sent, 'pending')]);
      const [again] = await claim();
      expect(again.id).toBe(first);
      expect(await nextAttemptAt(second)).toBeNull();

      await workers[0].recordOutcomes([ended(again, 'succeeded')]);
      expect(await nextAttemptAt(second)).not.toBeNull();
      expect((await claim()).map((d) => d.id)).toEqual([second]);
    });

    it('releases the next one when the first ends failed', async () => {
      const [, second] = [await due('wh_ordered', true), await due('wh_ordered', true)];
      const [sent] = await claim();
      await workers[0].recordOutcomes([ended(sent, 'failed')]);
      expect((await claim()).map((d) => d.id)).toEqual([second]);
    });

    it('never lets two workers send deliveries of one ordered endpoint at once', async () => {
      for (let i = 0; i < 20; i++) await due('wh_ordered', true);
      // Both claims in one second of the database clock, whatever this test's timing.
      const [{ ms }] = await db.query<{ ms: number }>(`SELECT 1000 - extract(milliseconds FROM now())::int % 1000 AS ms`);
      if (ms < 300) await new Promise((resolve) => setTimeout(resolve, ms + 10));
      const [a, b] = await Promise.all([claim(workers[0], 'a'), claim(workers[1], 'b')]);
      expect(a.length + b.length).toBe(1);
    });

    it('takes a retry by hand of an earlier delivery before the later ones still waiting', async () => {
      const [first, second, third] = [await due('wh_ordered', true), await due('wh_ordered', true), await due('wh_ordered', true)];
      const [sent] = await claim();
      await workers[0].recordOutcomes([ended(sent, 'failed')]);
      const [next] = await claim();
      expect(next.id).toBe(second);
      await workers[0].recordOutcomes([ended(next, 'succeeded')]);
      // The third is released; the first, retried by hand, goes before it.
      await log.restart('st_default', first);
      expect((await claim()).map((d) => d.id)).toEqual([first]);
      expect(await nextAttemptAt(third)).toBeNull();
    });

    it('lets go of a held delivery with nothing ahead of it any more (the safety net)', async () => {
      const [, second] = [await due('wh_ordered', true), await due('wh_ordered', true)];
      await claim();
      // As if the first had ended while a claim held the second on an older view.
      await db.query(
        `WITH ended AS (DELETE FROM delivery_queue WHERE ordered AND id <> $1 RETURNING *)
         INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count, ordered)
         SELECT id, store_id, event_id, webhook_id, event_type, 'succeeded', attempt_count, ordered FROM ended`,
        [second],
      );
      expect(await nextAttemptAt(second)).toBeNull();
      expect(await workers[0].releaseStalledOrdered()).toBe(1);
      expect((await claim()).map((d) => d.id)).toEqual([second]);
      expect(await workers[0].releaseStalledOrdered()).toBe(0);
    });
  });

  describe('a rate-limited endpoint', () => {
    it('lets at most its limit go per second across workers, puts the rest off in line, and leaves other endpoints alone', async () => {
      const limited: string[] = [];
      for (let i = 0; i < 7; i++) limited.push(await due('wh_limited'));
      const free: string[] = [];
      for (let i = 0; i < 5; i++) free.push(await due('wh_free'));

      // Both claims in one second of the database clock, whatever this test's timing.
      const [{ ms }] = await db.query<{ ms: number }>(`SELECT 1000 - extract(milliseconds FROM now())::int % 1000 AS ms`);
      if (ms < 300) await new Promise((resolve) => setTimeout(resolve, ms + 10));
      const [a, b] = await Promise.all([workers[0].claimDue(4, 10_000, 'a', NO_LIMITS), workers[1].claimDue(100, 10_000, 'b', NO_LIMITS)]);
      const claimed = [...a.deliveries, ...b.deliveries];
      expect(claimed.filter((d) => d.webhookId === 'wh_limited')).toHaveLength(2);
      expect(claimed.filter((d) => d.webhookId === 'wh_free')).toHaveLength(5);

      // The others wait in line, two a second from the claim on, the first a second after it; none dropped.
      const waiting = await db.query<{ after_ms: number }>(
        `SELECT round(extract(epoch FROM next_attempt_at - now()) * 1000)::int AS after_ms
         FROM deliveries WHERE webhook_id = 'wh_limited' AND lease_token IS NULL ORDER BY next_attempt_at`,
      );
      const afterMs = waiting.map((w) => w.after_ms);
      // The two claims' clocks differ by the moments between their statements.
      expect(afterMs.map((ms) => Math.round((ms - afterMs[0]) / 100) * 100)).toEqual([0, 500, 1_000, 1_500, 2_000]);
      expect(afterMs[0]).toBeGreaterThan(900);
      expect(afterMs[0]).toBeLessThanOrEqual(1_000);
      expect([...a.deferredDueAt, ...b.deferredDueAt].length).toBeGreaterThan(0);
      expect(Math.min(...a.deferredDueAt, ...b.deferredDueAt)).toBeLessThanOrEqual(Date.now() + 1_000);
    });

    it('counts a claim that began before another moved the window on in that later second, never moving it back', async () => {
      await due('wh_limited');
      // Another worker's claim, which began a moment later, has already filled the next second.
      await db.query(
        `INSERT INTO endpoint_rate_windows (webhook_id, store_id, window_start, requests)
         VALUES ('wh_limited', 'st_default', date_trunc('second', now()) + interval '1 second', 2)`,
      );
      expect(await claim()).toEqual([]);
      const [row] = await db.query<{ ahead: number; requests: number }>(
        `SELECT extract(epoch FROM window_start - date_trunc('second', now()))::int AS ahead, requests FROM endpoint_rate_windows`,
      );
      expect(row).toEqual({ ahead: 1, requests: 3 });
    });

    it('puts off every delivery it took past the second’s quota, also those the endpoint’s slots left out', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(await due('wh_limited'));
      const claim = await workers[0].claimDue(100, 10_000, 'worker', {
        ...NO_LIMITS,
        partial: new Map([['wh_limited', 1]]),
      });
      expect(claim.deliveries.map((d) => d.id)).toEqual([ids[0]]);
      // The second is within the quota but had no slot: still due. The four past the quota wait in line.
      const due2 = await db.query<{ id: string; waits: boolean }>(
        `SELECT id, next_attempt_at > now() AS waits FROM deliveries WHERE lease_token IS NULL ORDER BY id`,
      );
      expect(due2).toEqual(ids.slice(1).map((id, i) => ({ id, waits: i > 0 })));
    });

    it('counts nothing for endpoints without a limit', async () => {
      await due('wh_free');
      await claim();
      expect(await db.query('SELECT * FROM endpoint_rate_windows')).toEqual([]);
    });
  });
});
