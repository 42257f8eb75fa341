import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { newId, newIdAtTimeOf, timeDigits } from '../../common/ids';
import { dataSourceOptions } from '../../database/data-source-options';
import { runMigrationsLocked } from '../../database/run-migrations';
import type { AppConfig } from '../../config/app-config';
import { DeliveryLog } from './delivery-log.repository';

/** Ids of today, in the layout Hookline makes, so that they fall in today's partitions: `del_3` → `del_<today>0…03`. */
const TODAY = timeDigits(Date.now());
const id = (short: string): string => `${short.slice(0, 4)}${TODAY}${short.slice(4).padStart(16, '0')}`;

const CONFIG = { retentionDays: 30, maxReplayDeliveries: 10_000, replayTimeoutMs: 30_000, maxAttemptsPerDelivery: 100 } as AppConfig;

describe('DeliveryLog', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let log: DeliveryLog;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(dataSource);
    log = new DeliveryLog(dataSource, CONFIG);
    await db.query(`INSERT INTO stores (id, name) VALUES ('st_other', 'other')`);
    for (const [store, event] of [
      ['st_default', id('evt_1')],
      ['st_other', id('evt_2')],
    ]) {
      await db.query(`INSERT INTO events (id, store_id, type, body) VALUES ($1, $2, 'order.created', '{}')`, [event, store]);
      await db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ($1, $2, 'w', 'https://x.test/', '{order.created}', 's')`,
        [`wh_${store}`, store],
      );
    }
    const rows: Array<[string, string, string, string]> = [
      [id('del_1'), 'st_default', id('evt_1'), 'failed'],
      [id('del_2'), 'st_default', id('evt_1'), 'succeeded'],
      [id('del_3'), 'st_default', id('evt_1'), 'pending'],
      [id('del_4'), 'st_other', id('evt_2'), 'failed'],
    ];
    for (const [id, store, event, status] of rows) await place(id, store, event, status);
  });

  /** Puts a delivery in the queue (pending, due in an hour) or in the log (ended), wherever it was. */
  async function place(deliveryId: string, store: string, event: string, status: string): Promise<void> {
    await db.query(`DELETE FROM delivery_queue WHERE id = $1`, [deliveryId]);
    await db.query(`DELETE FROM delivery_log WHERE id = $1`, [deliveryId]);
    await db.query(
      status === 'pending'
        ? `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
           VALUES ($1, $2, $3, $4, 'order.created', now() + interval '1 hour')`
        : `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
           VALUES ($1, $2, $3, $4, 'order.created', '${status}', 0)`,
      [deliveryId, store, event, `wh_${store}`],
    );
  }

  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  it("reads only the caller's store", async () => {
    expect(await log.findInStore('st_default', id('del_4'))).toBeNull();
    expect(await log.findInStore('st_other', id('del_4'))).toMatchObject({ id: id('del_4'), status: 'failed', body: '{}' });
    expect((await log.listForEvent('st_default', id('evt_2'))).length).toBe(0);
    expect((await log.listForEvent('st_default', id('evt_1'))).map((d) => d.id)).toEqual([id('del_1'), id('del_2'), id('del_3')]);
  });

  it('pages newest first with one row more than the limit, filtered by status', async () => {
    expect((await log.pageForWebhook('st_default', 'wh_st_default', { limit: 1 })).map((d) => d.id)).toEqual([id('del_3'), id('del_2')]);
    expect((await log.pageForWebhook('st_default', 'wh_st_default', { limit: 5, beforeId: id('del_3') })).map((d) => d.id)).toEqual([
      id('del_2'),
      id('del_1'),
    ]);
    expect((await log.pageForWebhook('st_default', 'wh_st_default', { limit: 5, status: 'failed' })).map((d) => d.id)).toEqual([
      id('del_1'),
    ]);
  });

  it("answers the last attempt's duration, null before any attempt, in every list and after a restart", async () => {
    expect((await log.findInStore('st_default', id('del_2')))?.lastDurationMs).toBeNull();
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, store_id, number, started_at, duration_ms, status_code)
       VALUES ($1, 'st_default', 1, now(), 480, 500), ($1, 'st_default', 2, now(), 35, 200)`,
      [id('del_2')],
    );
    try {
      expect((await log.findInStore('st_default', id('del_2')))?.lastDurationMs).toBe(35);
      const page = await log.pageForWebhook('st_default', 'wh_st_default', { limit: 5 });
      expect(page.map((d) => [d.id, d.lastDurationMs])).toEqual([
        [id('del_3'), null],
        [id('del_2'), 35],
        [id('del_1'), null],
      ]);
      expect((await log.listForEvent('st_default', id('evt_1'))).map((d) => d.lastDurationMs)).toEqual([null, 35, null]);
      expect(await log.restart('st_default', id('del_2'))).toMatchObject({ status: 'pending', lastDurationMs: 35 });
    } finally {
      await db.query(`DELETE FROM delivery_attempts WHERE delivery_id = $1`, [id('del_2')]);
      await place(id('del_2'), 'st_default', id('evt_1'), 'succeeded');
    }
  });

  it('restarts a finished delivery but not a pending one, and the failed ones of an endpoint in its store only', async () => {
    expect(await log.restart('st_default', id('del_3'))).toBeNull();
    expect(await log.restart('st_default', id('del_2'))).toMatchObject({ id: id('del_2'), status: 'pending' });
    expect(await log.restartFailed('st_default', 'wh_st_other')).toEqual({ queued: 0, next: null });
    expect(await log.restartFailed('st_default', 'wh_st_default')).toEqual({ queued: 1, next: null });
    expect(await log.stateInStore('st_default', id('del_1'))).toEqual({ status: 'pending', webhookId: 'wh_st_default', attemptCount: 0 });
    expect(await log.stateInStore('st_other', id('del_4'))).toEqual({ status: 'failed', webhookId: 'wh_st_other', attemptCount: 0 });
  });

  it('leaves a delivery that has had MAX_ATTEMPTS_PER_DELIVERY attempts as it is', async () => {
    const capped = new DeliveryLog(dataSource, { ...CONFIG, maxAttemptsPerDelivery: 5 } as AppConfig);
    await db.query(`UPDATE delivery_log SET attempt_count = 5 WHERE id = $1`, [id('del_4')]);
    try {
      expect(await capped.stateInStore('st_other', id('del_4'))).toMatchObject({ status: 'failed', attemptCount: 5 });
      expect(await capped.restart('st_other', id('del_4'))).toBeNull();
      expect(await capped.restartFailed('st_other', 'wh_st_other')).toEqual({ queued: 0, next: null });
      await db.query(`UPDATE delivery_log SET attempt_count = 4 WHERE id = $1`, [id('del_4')]);
      expect(await capped.restartFailed('st_other', 'wh_st_other')).toEqual({ queued: 1, next: null });
    } finally {
      await place(id('del_4'), 'st_other', id('evt_2'), 'failed');
    }
  });

  it('neither retries nor finds for a retry a delivery older than retention', async () => {
    const old = `del_${timeDigits(Date.now() - 31 * 86_400_000)}0000000000000009`;
    await db.query(
      `CREATE TABLE delivery_log_old PARTITION OF delivery_log FOR VALUES FROM ($1) TO ($2)`
        .replace('$1', `'${old}'`)
        .replace('$2', `'${old}~'`),
    );
    await db.query(
      `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status) VALUES ($1, 'st_default', $2, 'wh_st_default', 'order.created', 'failed')`,
      [old, id('evt_1')],
    );
    expect(await log.stateInStore('st_default', old)).toBeNull();
    expect(await log.restart('st_default', old)).toBeNull();
    expect(await log.restartFailed('st_default', 'wh_st_default')).toEqual({ queued: 0, next: null });
    expect(await log.findInStore('st_default', old)).toMatchObject({ id: old, status: 'failed' });
  });

  describe('replay', () => {
    const HOUR = 3_600_000;
    const now = Date.now();
    // Ends before this file's other tests began, so that the events they wrote are not in it.
    const window = { from: new Date(now - 4 * HOUR), until: new Date(now - HOUR / 2) };

    async function event(store: string, type: string, at: number, data: Record<string, unknown> = {}): Promise<string> {
      const id = newId('evt', at);
      await db.query(`INSERT INTO events (id, store_id, type, body, created_at) VALUES ($1, $2, $3, $4, $5)`, [
        id,
        store,
        type,
        JSON.stringify({ id, type, data }),
        new Date(at).toISOString(),
      ]);
      return id;
    }

    async function endpoint(events: string[], isActive = true): Promise<string> {
      const id = newId('wh');
      await db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted, is_active) VALUES ($1, 'st_default', 'r', 'https://r.test/', $2, 's', $3)`,
        [id, events, isActive],
      );
      return id;
    }

    /** The events of the endpoint's pending deliveries, each of which must be due. */
    async function replayedEvents(webhookId: string): Promise<string[]> {
      const rows = await db.query<{ eventId: string; due: boolean }>(
        `SELECT event_id AS "eventId", next_attempt_at <= now() AS due FROM deliveries WHERE webhook_id = $1 AND status = 'pending' ORDER BY event_id`,
        [webhookId],
      );
      expect(rows.filter((row) => !row.due)).toEqual([]);
      return rows.map((row) => row.eventId);
    }

    it('queues, due now, each event of the window of a subscribed type the endpoint has no delivery of, in its store only, and once', async () => {
      const webhookId = await endpoint(['order.created', 'order.updated', 'webhook.disabled']);
      const missed = [
        await event('st_default', 'order.created', now - 3 * HOUR),
        await event('st_default', 'order.updated', now - 2 * HOUR),
        await event('st_default', 'webhook.disabled', now - 2 * HOUR, { webhookId: 'wh_someone_else' }),
      ];
      await event('st_default', 'product.created', now - 2 * HOUR);
      await event('st_default', 'order.created', now - 5 * HOUR);
      await event('st_other', 'order.created', now - 2 * HOUR);
      await event('st_default', 'webhook.disabled', now - HOUR, { webhookId });
      const delivered = await event('st_default', 'order.created', now - HOUR);
      await db.query(
        `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status) VALUES ($1, 'st_default', $2, $3, 'order.created', 'failed')`,
        // Like every delivery, its id carries its event's time, so it lies in the event's day.
        [newIdAtTimeOf('del', delivered), delivered, webhookId],
      );

      expect(await log.replay('st_other', webhookId, window)).toEqual({ queued: 0, next: null });
      expect(await log.replay('st_default', webhookId, window)).toEqual({ queued: 3, next: null });
      expect(await replayedEvents(webhookId)).toEqual(missed.sort());
      expect(await log.replay('st_default', webhookId, window)).toEqual({ queued: 0, next: null });
    });

    it('queues nothing for an inactive endpoint or an empty window', async () => {
      await event('st_default', 'order.cancelled', now - HOUR);
      const inactive = await endpoint(['order.cancelled'], false);
      expect(await log.replay('st_default', inactive, window)).toEqual({ queued: 0, next: null });
      const active = await endpoint(['order.cancelled']);
      expect(await log.replay('st_default', active, { from: new Date(now - 30 * 60_000), until: new Date(now) })).toEqual({
        queued: 0,
        next: null,
      });
      expect(await replayedEvents(active)).toEqual([]);
    });

    it('runs one replay of an endpoint at a time: the others answer null at once, and each event is queued once', async () => {
      const events = [];
      for (let i = 0; i < 20; i++) events.push(await event('st_default', 'order.refunded', now - HOUR + i));
      const webhookId = await endpoint(['order.refunded']);
      const held = dataSource.createQueryRunner();
      await held.startTransaction();
      try {
        await held.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [0x48_4c_52_50, webhookId]);
        expect(await log.replay('st_default', webhookId, window)).toBeNull();
        expect(await log.restartFailed('st_default', webhookId)).toBeNull();
      } finally {
        await held.rollbackTransaction();
        await held.release();
      }
      const answers = await Promise.all(Array.from({ length: 6 }, () => log.replay('st_default', webhookId, window)));
      const queued = answers.reduce((sum, answer) => sum + (answer?.queued ?? 0), 0);
      expect(queued + (await log.replay('st_default', webhookId, window))!.queued).toBe(20);
      expect(await replayedEvents(webhookId)).toEqual(events.sort());
    });

    it('queues at most MAX_REPLAY_DELIVERIES, in event order, and the `since` it answers continues exactly', async () => {
      const capped = new DeliveryLog(dataSource, { ...CONFIG, maxReplayDeliveries: 3 } as AppConfig);
      const events = [];
      // Millisecond 2 holds three events: a cap of 3 after milliseconds 0 and 1 ends before it.
      for (const offset of [0, 1, 2, 2, 2, 3, 4]) events.push(await event('st_default', 'order.paid', now - 2 * HOUR + offset));
      const webhookId = await endpoint(['order.paid']);
      const first = await capped.replay('st_default', webhookId, window);
      expect(first).toEqual({ queued: 2, next: new Date(now - 2 * HOUR + 2) });
      const second = await capped.replay('st_default', webhookId, { ...window, from: first!.next! });
      expect(second).toEqual({ queued: 3, next: new Date(now - 2 * HOUR + 3) });
      const third = await capped.replay('st_default', webhookId, { ...window, from: second!.next! });
      expect(third).toEqual({ queued: 2, next: null });
      expect(await replayedEvents(webhookId)).toEqual(events.sort());
    });

    it('restarts at most MAX_REPLAY_DELIVERIES failed deliveries, stamping when, and continues from `next`', async () => {
      const capped = new DeliveryLog(dataSource, { ...CONFIG, maxReplayDeliveries: 2 } as AppConfig);
      const webhookId = await endpoint(['order.shipped']);
      const failed = [];
      for (const offset of [0, 1, 2, 3, 4]) {
        const eventId = await event('st_default', 'order.shipped', now - 3 * HOUR + offset);
        const deliveryId = newIdAtTimeOf('del', eventId);
        await db.query(
          `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status) VALUES ($1, 'st_default', $2, $3, 'order.shipped', 'failed')`,
          [deliveryId, eventId, webhookId],
        );
        failed.push(deliveryId);
      }
      const since = new Date(now - 3 * HOUR + 1);
      const first = await capped.restartFailed('st_default', webhookId, since);
      expect(first).toEqual({ queued: 2, next: new Date(now - 3 * HOUR + 3) });
      expect(await capped.restartFailed('st_default', webhookId, first!.next!)).toEqual({ queued: 2, next: null });
      const rows = await db.query<{ id: string; status: string; stamped: boolean }>(
        `SELECT id, status, restarted_at > now() - interval '1 minute' AS stamped FROM deliveries WHERE webhook_id = $1 ORDER BY id`,
        [webhookId],
      );
      expect(rows).toEqual(failed.map((id, i) => ({ id, status: i === 0 ? 'failed' : 'pending', stamped: i === 0 ? null : true })));
    });
  });
});
