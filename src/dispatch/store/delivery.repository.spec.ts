import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { timeDigits } from '../../common/ids';
import type { AppConfig } from '../../config/app-config';
import { dataSourceOptions } from '../../database/data-source-options';
import { runMigrationsLocked } from '../../database/run-migrations';
import { DeliveryLog } from './delivery-log.repository';
import {
  DeliveryRepository,
  INACTIVE_ENDPOINT_ERROR,
  INTERRUPTED_ATTEMPT_ERROR,
  slotsJson,
  type AttemptOutcome,
  withEventBodies,
} from './delivery.repository';
import { attemptTrigger } from '../worker/retry-policy';

const NO_LIMITS = { excluded: [], partial: new Map(), perEndpoint: 100, excludedStores: [], partialStores: new Map(), perStore: 100 };

/** Ids in the layout Hookline makes, so that they fall in today's partitions. */
const TODAY = timeDigits(Date.now());
const EVENT = `evt_${TODAY}0000000000000001`;

/** The statements that decide who sends what, against a real PostgreSQL. */
describe('DeliveryRepository', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let pool: Pool;
  let repository: DeliveryRepository;
  let log: DeliveryLog;
  let sequence = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(dataSource);
    pool = new Pool({ connectionString: db.url, max: 2 });
    repository = new DeliveryRepository(pool);
    log = new DeliveryLog(dataSource, { retentionDays: 30, maxAttemptsPerDelivery: 100 } as AppConfig);
    await db.query(`INSERT INTO events (id, store_id, type, body) VALUES ($1, 'st_default', 'order.created', '{"id":"evt_1"}')`, [EVENT]);
    for (const id of ['wh_a', 'wh_b']) {
      await db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ($1, 'st_default', $1, 'https://x.test/', '{order.created}', 'sealed')`,
        [id],
      );
    }
  });

  afterAll(async () => {
    await pool.end();
    await dataSource.destroy();
    await db.drop();
  });

  beforeEach(() => db.query('DELETE FROM delivery_queue; DELETE FROM delivery_log'));

  async function due(webhookId: string, count = 1): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = `del_${TODAY}${String(++sequence).padStart(16, '0')}`;
      await db.query(
        `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
         VALUES ($1, 'st_default', $4, $2, 'order.created', now() - make_interval(secs => $3))`,
        [id, webhookId, 100 - sequence / 1000, EVENT],
      );
      ids.push(id);
    }
    return ids;
  }

  it('gives every delivery of an event its body and trace, read once per claim', async () => {
    await db.query(`UPDATE events SET traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' WHERE id = $1`, [EVENT]);
    try {
      await due('wh_a', 2);
      await due('wh_b', 2);
      const claimed = (await repository.claimDue(10, 10_000, 'lease-1', NO_LIMITS)).deliveries;
      expect(claimed).toHaveLength(4);
      for (const delivery of claimed) {
        expect(delivery).toMatchObject({ body: '{"id":"evt_1"}', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
      }
    } finally {
      await db.query(`UPDATE events SET traceparent = NULL WHERE id = $1`, [EVENT]);
    }
  });

  it('leases without a new index entry (a HOT update) and moves a delivery to the log once, when it ends', async () => {
    const [retried, ended] = await due('wh_a', 2);
    // One connection, whose own counts of row writes (not yet sent to the statistics) can be read.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const onClient = new DeliveryRepository({ query: (config: never) => client.query(config) } as unknown as Pool);
      type Writes = { updated: number; hot: number; inserted: number; deleted: number };
      const counts = async (table: string): Promise<Writes> =>
        (
          await client.query<Writes>(
            `SELECT sum(pg_stat_get_xact_tuples_updated(relid))::int AS updated, sum(pg_stat_get_xact_tuples_hot_updated(relid))::int AS hot,
               sum(pg_stat_get_xact_tuples_inserted(relid))::int AS inserted, sum(pg_stat_get_xact_tuples_deleted(relid))::int AS deleted
             FROM (SELECT $1::regclass AS relid UNION SELECT relid FROM pg_partition_tree($1::regclass) WHERE isleaf) t`,
            [table],
          )
        ).rows[0];
      // Counted from here: the connection's counts may hold its earlier transactions' too.
      const start = { delivery_queue: await counts('delivery_queue'), delivery_log: await counts('delivery_log') };
      const writes = async (table: keyof typeof start): Promise<Writes> => {
        const now = await counts(table);
        const from = start[table];
        return {
          updated: now.updated - from.updated,
          hot: now.hot - from.hot,
          inserted: now.inserted - from.inserted,
          deleted: now.deleted - from.deleted,
        };
      };

      expect((await onClient.claimDue(2, 10_000, 'hot', NO_LIMITS)).deliveries).toHaveLength(2);
      expect(await writes('delivery_queue')).toEqual({ updated: 2, hot: 2, inserted: 0, deleted: 0 });

      const outcome = (id: string, status: 'pending' | 'succeeded'): AttemptOutcome => ({
        deliveryId: id,
        leaseToken: 'hot',
        attempt: {
          number: 1,
          trigger: 'scheduled',
          startedAt: new Date(),
          durationMs: 5,
          statusCode: 200,
          error: null,
          responseBody: null,
        },
        status,
        retryDelayMs: 60_000,
        decidedAt: Date.now(),
        lastStatusCode: status === 'pending' ? 500 : 200,
        lastError: null,
      });
      await onClient.recordOutcomes([outcome(retried, 'pending'), outcome(ended, 'succeeded')]);
      expect(await writes('delivery_queue')).toEqual({ updated: 3, hot: 2, inserted: 0, deleted: 1 });
      expect(await writes('delivery_log')).toEqual({ updated: 0, hot: 0, inserted: 1, deleted: 0 });
      const rows = await client.query(`SELECT id, status, last_status_code AS code FROM deliveries ORDER BY id`);
      expect(rows.rows).toEqual([
        { id: retried, status: 'pending', code: 500 },
        { id: ended, status: 'succeeded', code: 200 },
      ]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('claims due deliveries with what sending needs, leases them, and never hands the same one out twice', async () => {
    await due('wh_a', 3);
    const [first, second] = await Promise.all([
      repository.claimDue(2, 10_000, 'lease-1', NO_LIMITS).then((c) => c.deliveries),
      repository.claimDue(2, 10_000, 'lease-2', NO_LIMITS).then((c) => c.deliveries),
    ]);
    const ids = [...first, ...second].map((d) => d.id);
    expect(new Set(ids).size).toBe(3);
    expect(first[0] ?? second[0]).toMatchObject({ body: '{"id":"evt_1"}', url: 'https://x.test/', attemptNumber: 1, cycleAttempt: 1 });
    expect(await repository.claimDue(10, 10_000, 'lease-3', NO_LIMITS).then((c) => c.deliveries)).toEqual([]);
  });

  it('leaves a full endpoint’s deliveries alone and takes only the free slots of a busy one', async () => {
    await due('wh_a', 3);
    await due('wh_b', 3);
    const claimed = await repository
      .claimDue(10, 10_000, 'lease', {
        ...NO_LIMITS,
        excluded: ['wh_a'],
        partial: new Map([['wh_b', 2]]),
        perEndpoint: 4,
      })
      .then((c) => c.deliveries);
    expect(claimed.map((d) => d.webhookId)).toEqual(['wh_b', 'wh_b']);
  });

  it('records an attempt and the decision only for the worker that holds the lease', async () => {
    const [id] = await due('wh_a');
    await repository.claimDue(1, 10_000, 'mine', NO_LIMITS).then((c) => c.deliveries);
    const outcome = (token: string, statusCode: number): AttemptOutcome => ({
      deliveryId: id,
      leaseToken: token,
      attempt: {
        number: 1,
        trigger: 'scheduled',
        startedAt: new Date(),
        durationMs: 5,
        statusCode,
        error: `HTTP ${statusCode}`,
        responseBody: 'no',
      },
      status: statusCode === 200 ? 'succeeded' : 'pending',
      retryDelayMs: 1_000,
      decidedAt: Date.now(),
      lastStatusCode: statusCode,
      lastError: `HTTP ${statusCode}`,
    });
    const {
      scheduled: [scheduled],
    } = await repository.recordOutcomes([outcome('mine', 500)]);
    expect(scheduled.deliveryId).toBe(id);
    expect(scheduled.dueAt).toBeGreaterThan(Date.now() + 500);
    // Another worker's word on the same attempt changes neither the decision nor the attempt.
    expect(await repository.recordOutcomes([outcome('not-mine', 200)])).toEqual({ scheduled: [], failing: [] });
    const [row] = await db.query<{ status: string; lease_token: string | null; last_error: string }>(
      'SELECT status, lease_token, last_error FROM deliveries WHERE id = $1',
      [id],
    );
    expect(row).toEqual({ status: 'pending', lease_token: null, last_error: 'HTTP 500' });
    expect(await log.attemptsOf(id)).toEqual([
      expect.objectContaining({ number: 1, trigger: 'scheduled', statusCode: 500, error: 'HTTP 500' }),
    ]);
  });

  it('keeps what started each attempt: a retry by hand starts its cycle with a manual attempt, interrupted or not', async () => {
    const [id] = await due('wh_a');
    const record = async (status: 'failed' | 'pending') => {
      const [claimed] = await repository.claimDue(1, 10_000, 'worker', NO_LIMITS).then((c) => c.deliveries);
      const attempt = {
        number: claimed.attemptNumber,
        startedAt: new Date(),
        durationMs: 5,
        statusCode: 500,
        error: 'HTTP 500',
        responseBody: null,
      };
      const trigger = attemptTrigger(claimed.attemptNumber, claimed.cycleAttempt);
      await repository.recordOutcomes([
        {
          deliveryId: id,
          leaseToken: 'worker',
          attempt: { ...attempt, trigger },
          status,
          retryDelayMs: 0,
          decidedAt: Date.now(),
          lastStatusCode: 500,
          lastError: 'HTTP 500',
        },
      ]);
    };
    await record('failed');
    await log.restart('st_default', id);
    await record('pending');
    await record('failed');
    await log.restart('st_default', id);
    // This cycle's first attempt dies with its worker: the row put in its place keeps its trigger.
    await repository.claimDue(1, 0, 'dead-worker', NO_LIMITS).then((c) => c.deliveries);
    await repository.claimDue(1, 10_000, 'next-worker', NO_LIMITS).then((c) => c.deliveries);
    expect((await log.attemptsOf(id)).map(({ number, trigger, error }) => ({ number, trigger, error }))).toEqual([
      { number: 1, trigger: 'scheduled', error: 'HTTP 500' },
      { number: 2, trigger: 'manual', error: 'HTTP 500' },
      { number: 3, trigger: 'scheduled', error: 'HTTP 500' },
      { number: 4, trigger: 'manual', error: INTERRUPTED_ATTEMPT_ERROR },
    ]);
  });

  it('records the attempt of a worker that died mid-attempt as interrupted when its lease is claimed again', async () => {
    const [id] = await due('wh_a');
    await repository.claimDue(1, 0, 'dead-worker', NO_LIMITS).then((c) => c.deliveries);
    const [again] = await repository.claimDue(1, 10_000, 'next-worker', NO_LIMITS).then((c) => c.deliveries);
    expect(again).toMatchObject({ id, attemptNumber: 2 });
    expect(await log.attemptsOf(id)).toEqual([expect.objectContaining({ number: 1, error: INTERRUPTED_ATTEMPT_ERROR })]);
  });

  it('keeps the late result of a worker whose lease ran out, also once another worker ended the delivery', async () => {
    const [id] = await due('wh_a');
    await repository.claimDue(1, 0, 'late-worker', NO_LIMITS);
    await repository.claimDue(1, 10_000, 'next-worker', NO_LIMITS);
    const result = (token: string, number: number, statusCode: number): AttemptOutcome => ({
      deliveryId: id,
      leaseToken: token,
      attempt: { number, trigger: 'scheduled', startedAt: new Date(), durationMs: 7, statusCode, error: null, responseBody: null },
      status: 'succeeded',
      retryDelayMs: 0,
      decidedAt: Date.now(),
      lastStatusCode: statusCode,
      lastError: null,
    });
    await repository.recordOutcomes([result('next-worker', 2, 200)]);
    expect((await db.query(`SELECT status FROM delivery_log WHERE id = $1`, [id]))[0]).toEqual({ status: 'succeeded' });

    // The first worker's answer comes in after the delivery left the queue: its attempt is kept.
    await repository.recordOutcomes([result('late-worker', 1, 202)]);
    expect((await log.attemptsOf(id)).map((a) => [a.number, a.statusCode, a.error])).toEqual([
      [1, 202, null],
      [2, 200, null],
    ]);
  });

  it('writes a late result and a holder’s result of one batch, each where it belongs', async () => {
    const [late, held] = await due('wh_a', 2);
    await repository.claimDue(1, 0, 'late-worker', NO_LIMITS);
    const claimed = await repository.claimDue(2, 10_000, 'worker', NO_LIMITS).then((c) => c.deliveries);
    expect(claimed.map((d) => [d.id, d.attemptNumber]).sort()).toEqual([
      [late, 2],
      [held, 1],
    ]);
    const result = (deliveryId: string, token: string, statusCode: number): AttemptOutcome => ({
      deliveryId,
      leaseToken: token,
      attempt: { number: 1, trigger: 'scheduled', startedAt: new Date(), durationMs: 7, statusCode, error: null, responseBody: null },
      status: 'succeeded',
      retryDelayMs: 0,
      decidedAt: Date.now(),
      lastStatusCode: statusCode,
      lastError: null,
    });
    await repository.recordOutcomes([result(late, 'late-worker', 202), result(held, 'worker', 200)]);
    expect((await log.attemptsOf(late)).map((a) => [a.number, a.statusCode, a.error])).toEqual([[1, 202, null]]);
    expect((await log.attemptsOf(held)).map((a) => [a.number, a.statusCode, a.error])).toEqual([[1, 200, null]]);
    expect((await db.query(`SELECT id, status FROM deliveries ORDER BY id`)).map((r) => r.status)).toEqual(['pending', 'succeeded']);
  });

  it('gives unattempted claims back, due at once for any worker', async () => {
    const [id] = await due('wh_a');
    await repository.claimDue(1, 60_000, 'leaving', NO_LIMITS).then((c) => c.deliveries);
    await repository.releaseLeases([id], 'leaving');
    expect(await repository.claimDue(1, 10_000, 'other', NO_LIMITS).then((c) => c.deliveries)).toEqual([
      expect.objectContaining({ id, attemptNumber: 1 }),
    ]);
  });

  it('ends the waiting deliveries of an endpoint made inactive, in the caller’s transaction, and leaves claimed ones to their worker', async () => {
    const [waiting, claimed] = await due('wh_a', 2);
    const [other] = await due('wh_b');
    await db.query(`UPDATE delivery_queue SET lease_token = 'busy', lease_until = now() + interval '1 hour' WHERE id = $1`, [claimed]);

    await dataSource
      .transaction(async (manager) => {
        await repository.failWaiting(manager, 'wh_a');
        throw new Error('roll back');
      })
      .catch(() => undefined);
    const statusOf = async (id: string) =>
      (await db.query<{ status: string; last_error: string | null }>('SELECT status, last_error FROM deliveries WHERE id = $1', [id]))[0];
    expect(await statusOf(waiting)).toEqual({ status: 'pending', last_error: null });

    await dataSource.transaction((manager) => repository.failWaiting(manager, 'wh_a'));
    expect(await statusOf(waiting)).toEqual({ status: 'failed', last_error: INACTIVE_ENDPOINT_ERROR });
    expect(await statusOf(claimed)).toEqual({ status: 'pending', last_error: null });
    expect(await statusOf(other)).toEqual({ status: 'pending', last_error: null });
  });

  describe('endpoint health and webhook.delivery_failed, written with the outcome', () => {
    const THRESHOLDS = { afterMs: 0, minFailures: 2 };

    beforeEach(async () => {
      await db.query('DELETE FROM endpoint_health');
      await db.query(`DELETE FROM events WHERE id <> 'evt_1'`);
      await db.query(`DELETE FROM webhooks WHERE id = 'wh_watch'`);
    });

    /** Claims one new delivery to `webhookId` and answers the outcome that ends it. */
    async function ended(webhookId: string, status: 'failed' | 'succeeded', extra: Partial<AttemptOutcome> = {}): Promise<AttemptOutcome> {
      const [id] = await due(webhookId);
      const [claimed] = (
        await repository.claimDue(1, 10_000, 'worker', {
          ...NO_LIMITS,
          excluded: webhookId === 'wh_a' ? ['wh_b'] : ['wh_a'],
        })
      ).deliveries;
      expect(claimed.id).toBe(id);
      return {
        deliveryId: id,
        leaseToken: 'worker',
        attempt: {
          number: 1,
          trigger: 'scheduled',
          startedAt: new Date(),
          durationMs: 5,
          statusCode: 500,
          error: 'HTTP 500',
          responseBody: null,
        },
        status,
        retryDelayMs: 0,
        decidedAt: Date.now(),
        lastStatusCode: status === 'failed' ? 500 : 200,
        lastError: status === 'failed' ? 'HTTP 500' : null,
        ...extra,
      };
    }

    const health = async (webhookId: string) =>
      (
        await db.query<{ failures: number; failing: boolean; succeeded: boolean }>(
          `SELECT failures, failing_since IS NOT NULL AS failing, last_success_at IS NOT NULL AS succeeded FROM endpoint_health WHERE webhook_id = $1`,
          [webhookId],
        )
      )[0];

    it('counts deliveries that end failed after an attempt, and answers the endpoint once it crosses the thresholds', async () => {
      expect(await repository.recordOutcomes([await ended('wh_a', 'failed')], THRESHOLDS)).toEqual({ scheduled: [], failing: [] });
      expect(await health('wh_a')).toEqual({ failures: 1, failing: true, succeeded: false });
      expect(await repository.recordOutcomes([await ended('wh_a', 'failed')], THRESHOLDS)).toEqual({ scheduled: [], failing: ['wh_a'] });
      // Not yet failing for long enough.
      expect((await repository.recordOutcomes([await ended('wh_a', 'failed')], { afterMs: 60_000, minFailures: 2 })).failing).toEqual([]);
    });

    it('does not count a delivery ended for an inactive endpoint (no attempt), nor a person’s test', async () => {
      await repository.recordOutcomes([await ended('wh_a', 'failed', { attempt: null })], THRESHOLDS);
      await repository.recordOutcomes([await ended('wh_a', 'failed', { probe: true })], THRESHOLDS);
      expect(await health('wh_a')).toBeUndefined();
    });

    it('clears the count with a stamped success, and not with an unstamped one', async () => {
      await repository.recordOutcomes([await ended('wh_a', 'failed')], THRESHOLDS);
      await repository.recordOutcomes([await ended('wh_a', 'succeeded')], THRESHOLDS);
      expect(await health('wh_a')).toEqual({ failures: 1, failing: true, succeeded: false });
      await repository.recordOutcomes([await ended('wh_a', 'succeeded', { stampSuccess: true })], THRESHOLDS);
      expect(await health('wh_a')).toEqual({ failures: 0, failing: false, succeeded: true });
      await dataSource.transaction((manager) => repository.clearHealth(manager, 'wh_a'));
      expect(await health('wh_a')).toBeUndefined();
    });

    it('writes nothing for the stamped success of an endpoint with no failing count', async () => {
      await repository.recordOutcomes([await ended('wh_a', 'succeeded', { stampSuccess: true })], THRESHOLDS);
      expect(await health('wh_a')).toBeUndefined();
    });

    it('writes webhook.delivery_failed with its deliveries only when an active endpoint of the store subscribes', async () => {
      const event = { id: 'evt_notice1', createdAt: new Date(), body: '{"id":"evt_notice1","type":"webhook.delivery_failed"}' };
      await repository.recordOutcomes([await ended('wh_a', 'failed', { failureEvent: event })]);
      expect(await db.query(`SELECT id FROM events WHERE id = 'evt_notice1'`)).toEqual([]);

      await db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ('wh_watch', 'st_default', 'watch', 'https://x.test/', '{webhook.delivery_failed}', 'sealed')`,
      );
      await repository.recordOutcomes([await ended('wh_a', 'failed', { failureEvent: event })]);
      expect(await db.query(`SELECT type, body FROM events WHERE id = 'evt_notice1'`)).toEqual([
        { type: 'webhook.delivery_failed', body: event.body },
      ]);
      expect(await db.query(`SELECT webhook_id, event_type, status FROM deliveries WHERE event_id = 'evt_notice1'`)).toEqual([
        { webhook_id: 'wh_watch', event_type: 'webhook.delivery_failed', status: 'pending' },
      ]);

      // An outcome the worker no longer holds the lease for writes nothing.
      const late = await ended('wh_a', 'failed', { failureEvent: { ...event, id: 'evt_notice2' } });
      await repository.recordOutcomes([{ ...late, leaseToken: 'someone-else' }]);
      expect(await db.query(`SELECT id FROM events WHERE id = 'evt_notice2'`)).toEqual([]);
    });
  });

  describe('stores in turn', () => {
    it('passes the free slots as one JSON object, escaping an id only when it needs it', () => {
      expect(slotsJson(new Map())).toBe('{}');
      expect(
        JSON.parse(
          slotsJson(
            new Map([
              ['wh_a', 3],
              ['st_"x"', 1],
            ]),
          ),
        ),
      ).toEqual({ wh_a: 3, 'st_"x"': 1 });
    });

    beforeAll(async () => {
      for (const store of ['st_b', 'st_c']) {
        await db.query(`INSERT INTO stores (id, name) VALUES ($1, $1)`, [store]);
        await db.query(
          `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ($1, $2, $1, 'https://x.test/', '{order.created}', 'sealed')`,
          [`wh_${store}`, store],
        );
      }
    });

    /** `count` due deliveries of `store`'s endpoint, due `agoSeconds` ago. */
    async function dueIn(store: string, count: number, agoSeconds: number): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const id = `del_${TODAY}${String(++sequence).padStart(16, '0')}`;
        await db.query(
          `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
           VALUES ($1, $2, $3, $4, 'order.created', now() - make_interval(secs => $5))`,
          [id, store, EVENT, `wh_${store}`, agoSeconds],
        );
        ids.push(id);
      }
      return ids;
    }

    it('serves a store with one delivery due in the same claim as a store with many due before it', async () => {
      await due('wh_a', 30);
      const [quiet] = await dueIn('st_c', 1, 1);
      const claim = await repository.claimDue(10, 10_000, 'worker', NO_LIMITS);
      expect(claim.deliveries.map((d) => d.id)).toContain(quiet);
      // Ten split between the two stores with due work: the one with more gets its five.
      expect(claim.deliveries.filter((d) => d.storeId === 'st_default')).toHaveLength(5);
      expect(claim.crowdedStores).toEqual(['st_default']);
    });

    it('never takes more of a store than its free slots, and none of a store without any', async () => {
      await due('wh_a', 5);
      await dueIn('st_b', 5, 50);
      const claim = await repository.claimDue(100, 10_000, 'worker', {
        ...NO_LIMITS,
        excludedStores: ['st_b'],
        partialStores: new Map([['st_default', 2]]),
      });
      expect(claim.deliveries.map((d) => d.storeId)).toEqual(['st_default', 'st_default']);
      // More of it is due than it could take: for a claim once it has free slots again.
      expect(claim).toMatchObject({ crowdedStores: ['st_default'], turnsCut: false });
    });

    it('answers when the next delivery no worker holds is due, across stores, and stops at the first store with one due', async () => {
      expect(await repository.nextDueAt()).toBeNull();
      const [later] = await dueIn('st_b', 1, -60);
      const [sooner] = await dueIn('st_c', 1, -30);
      const dueAtOf = async (id: string): Promise<Date> =>
        (await db.query<{ at: Date }>(`SELECT next_attempt_at AS at FROM delivery_queue WHERE id = $1`, [id]))[0].at;
      // None due yet: the earliest of every store's first.
      expect(await repository.nextDueAt()).toEqual(await dueAtOf(sooner));
      // A delivery a worker holds is not waiting.
      await db.query(`UPDATE delivery_queue SET lease_token = 'w', lease_until = now() + interval '1 minute' WHERE id = $1`, [sooner]);
      expect(await repository.nextDueAt()).toEqual(await dueAtOf(later));
      // Due now in two stores: the walk ends at the first (st_b), not at the earliest due (st_c's).
      const [dueNow] = await dueIn('st_b', 1, 10);
      await dueIn('st_c', 1, 100);
      expect(await repository.nextDueAt()).toEqual(await dueAtOf(dueNow));
    });

    it('starts after the store it is given, goes once around, and answers where the next claim goes on', async () => {
      await dueIn('st_b', 2, 10);
      await dueIn('st_c', 2, 10);
      await due('wh_a', 2);
      const first = await repository.claimDue(100, 10_000, 'worker', NO_LIMITS, { after: 'st_b', stores: 2 });
      // Which stores had their turn; the rows come back in no promised order.
      expect([...new Set(first.deliveries.map((d) => d.storeId))].sort()).toEqual(['st_c', 'st_default']);
      expect(first).toMatchObject({ lastStore: 'st_default', turnsCut: true });
      const second = await repository.claimDue(100, 10_000, 'worker', NO_LIMITS, { after: first.lastStore!, stores: 32 });
      expect(second.deliveries.map((d) => d.storeId)).toEqual(['st_b', 'st_b']);
      expect(second).toMatchObject({ lastStore: 'st_b', turnsCut: false, crowdedStores: [] });
    });
  });
});

describe('withEventBodies', () => {
  const row = (id: string, eventId: string, body: string | null, traceparent: string | null = null) => ({ id, eventId, body, traceparent });

  it("gives each delivery its event's body and trace from the one that carries them", () => {
    const deliveries = withEventBodies([
      row('d1', 'e1', null),
      row('d2', 'e1', 'one', 'tp1'),
      row('d3', 'e2', 'two'),
      row('d4', 'e2', null),
    ]);
    expect(deliveries.map((d) => [d.body, d.traceparent])).toEqual([
      ['one', 'tp1'],
      ['one', 'tp1'],
      ['two', null],
      ['two', null],
    ]);
  });

  it('leaves the body null when the event is gone', () => {
    expect(withEventBodies([row('d1', 'e1', null), row('d2', 'e1', null)]).map((d) => d.body)).toEqual([null, null]);
  });
});
