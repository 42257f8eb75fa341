import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Pool } from 'pg';
import { newId, newIdAtTimeOf } from '../src/common/ids';
import { PartitionMaintenance } from '../src/dispatch/retention/partition-maintenance';
import { DAY_MS, dayOf, partitionName } from '../src/dispatch/retention/partition-plan';
import { RetentionScheduler } from '../src/dispatch/retention/retention-scheduler';
import { ADMIN_KEY, startApp, TestApp, TEST_ENCRYPTION_KEY } from './support/app';
import { eventually } from './support/eventually';
import { expectError, expectJson, rowCounts } from './support/expectations';
import { createWebhook, delivery, deliveriesOf, type DeliveryView, orderData } from './support/fixtures';
import { Receiver } from './support/receiver';

const EXPIRED = /^expired: still pending 6s after its event \(MAX_DELIVERY_AGE\)/;

/**
 * MAX_DELIVERY_AGE=6s against the real app and a real receiver: deliveries still pending six seconds
 * after their event end `failed` saying they expired, whatever holds them back (an endpoint that
 * never answers, a rate limit, an ordered endpoint's failing head), so no backlog keeps a day of
 * the log past retention.
 */
describe('deliveries expire MAX_DELIVERY_AGE after their event', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    receiver.respondWith((request, res) => {
      if (request.path === '/hanging') return; // accepts, never answers
      res.writeHead(request.path === '/ordered' ? 503 : 200).end();
    });
    t = await startApp({
      env: { MAX_DELIVERY_AGE: '6s', DELIVERY_TIMEOUT_MS: '2000', ENDPOINT_CONCURRENCY: '1', RETENTION_DAYS: '30' },
    });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  /** Publishes `count` order.created events in one batch (one moment for all). */
  async function publishBatch(count: number): Promise<number> {
    const events = Array.from({ length: count }, (_, n) => ({ type: 'order.created', data: orderData(n) }));
    await expectJson(await t.api('/events/batch', { method: 'POST', json: { events } }), 202);
    return Date.now();
  }

  /** Every delivery of the endpoint once none is pending, within `deadlineMs` of now. */
  function finished(webhookId: string, count: number, deadlineMs: number): Promise<DeliveryView[]> {
    return eventually(
      () => deliveriesOf(t, webhookId, '?limit=100'),
      (rows) => rows.length === count && rows.every((row) => row.status !== 'pending'),
      { deadlineMs, intervalMs: 200, what: `all ${count} deliveries finished` },
    );
  }

  it('ends the backlog of an endpoint that never answers, within seconds of the age', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/hanging`, ['order.created']);
    // One attempt at a time, each held 2 s: without expiry the 10 take 3 attempts each, a minute.
    const published = await publishBatch(10);
    const rows = await finished(webhook.id, 10, 20_000);
    expect(Date.now() - published).toBeLessThan(20_000);
    expect(rows.every((row) => row.status === 'failed')).toBe(true);
    const expired = rows.filter((row) => EXPIRED.test(row.lastError ?? ''));
    expect(expired.length).toBeGreaterThanOrEqual(7);
    expect(rows.filter((row) => row.attemptCount === 0).every((row) => EXPIRED.test(row.lastError ?? ''))).toBe(true);
    await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: false } }), 200);
  });

  it('ends the waiting part of a rate-limited backlog, and a retry of one then sends it', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/limited`, ['order.created'], { rateLimitPerSecond: 1 });
    // One a second: without expiry all 20 arrive within 20 s.
    await publishBatch(20);
    const rows = await finished(webhook.id, 20, 20_000);
    const succeeded = rows.filter((row) => row.status === 'succeeded');
    const failed = rows.filter((row) => row.status === 'failed');
    expect(succeeded.length).toBeGreaterThanOrEqual(1);
    expect(succeeded.length).toBeLessThanOrEqual(15);
    expect(failed.length).toBe(20 - succeeded.length);
    for (const row of failed) expect(row).toMatchObject({ attemptCount: 0, lastError: expect.stringMatching(EXPIRED) as string });
    expect(receiver.to('/limited')).toHaveLength(succeeded.length);

    // A retry starts its age again: it goes out, though its event is older than MAX_DELIVERY_AGE.
    await expectJson(await t.api(`/deliveries/${failed[0].id}/retry`, { method: 'POST' }), 202);
    const retried = await eventually(
      () => delivery(t, failed[0].id),
      (row) => row.status !== 'pending',
      { deadlineMs: 10_000, what: 'the retried delivery finished' },
    );
    expect(retried).toMatchObject({ status: 'succeeded', attemptCount: 1 });
    await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: false } }), 200);
  });

  it("ends an ordered endpoint's backlog held behind a failing delivery", async () => {
    const webhook = await createWebhook(t, `${receiver.url}/ordered`, ['order.created'], { ordered: true });
    // Each delivery takes its whole schedule (0, 1 s, 4 s) to fail: without expiry, 6 take 30 s.
    await publishBatch(6);
    const rows = await finished(webhook.id, 6, 20_000);
    expect(rows.every((row) => row.status === 'failed')).toBe(true);
    const neverTried = rows.filter((row) => row.attemptCount === 0);
    expect(neverTried.length).toBeGreaterThanOrEqual(3);
    for (const row of neverTried) expect(row.lastError).toMatch(EXPIRED);
    await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: false } }), 200);
  });

  it('lets retention drop a day whose backlog was held for weeks, once it has expired', async () => {
    const today = dayOf(Date.now());
    const day = today - 40;
    const pool = new Pool({ connectionString: t.db.url, max: 1 });
    try {
      await new PartitionMaintenance(pool).ensureDays([day]);
    } finally {
      await pool.end();
    }
    const webhook = await createWebhook(t, `${receiver.url}/weeks-behind`, ['order.created'], { ordered: true, isActive: false });
    // An ordered backlog of that day as the service wrote it: the first put off, the others held behind it.
    const at = new Date(day * DAY_MS + 7_200_000);
    for (let n = 0; n < 3; n++) {
      const event = newId('evt', at.getTime() + n);
      await t.db.query(`INSERT INTO events (id, store_id, type, body, created_at) VALUES ($1, 'st_default', 'order.created', '{}', $2)`, [
        event,
        at,
      ]);
      await t.db.query(
        `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, ordered, next_attempt_at, created_at)
         VALUES ($1, 'st_default', $2, $3, 'order.created', true, CASE WHEN $4 THEN now() + interval '1 hour' END, $5)`,
        [newIdAtTimeOf('del', event), event, webhook.id, n === 0, at],
      );
    }
    await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows.length === 3 && rows.every((row) => row.status === 'failed' && EXPIRED.test(row.lastError ?? '')),
      { deadlineMs: 10_000, what: 'the old backlog expired' },
    );
    const report = await t.app.get(RetentionScheduler).run();
    expect(report?.keptPending).toEqual([]);
    expect(report?.dropped.map((dropped) => [dropped.table, dropped.day])).toEqual([
      ['delivery_attempts', day],
      ['delivery_log', day],
      ['events', day],
    ]);
    const [{ left }] = await t.db.query<{ left: number }>(`SELECT count(*)::int AS left FROM pg_class WHERE relname = $1`, [
      partitionName('delivery_log', day),
    ]);
    expect(left).toBe(0);
  });

  it('refuses an endpoint retrySchedule longer than MAX_DELIVERY_AGE, changing nothing', async () => {
    const counts = await rowCounts(t.db);
    await expectError(
      await t.api('/webhooks', {
        method: 'POST',
        json: { name: 'slow', url: `${receiver.url}/slow`, events: ['order.created'], retrySchedule: [0, 5_000, 5_000] },
      }),
      400,
      'retrySchedule must add up to at most MAX_DELIVERY_AGE (6s), the longest a delivery stays pending; this one adds up to 10s',
    );
    const webhook = await createWebhook(t, `${receiver.url}/slow`, ['order.created'], { isActive: false });
    const before = await rowCounts(t.db);
    expect(before.webhooks).toBe(counts.webhooks + 1);
    await expectError(
      await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { retrySchedule: [0, 7_000] } }),
      400,
      /retrySchedule must add up to at most MAX_DELIVERY_AGE \(6s\).*adds up to 7s/,
    );
    expect(await expectJson(await t.api(`/webhooks/${webhook.id}`), 200)).toMatchObject({ retrySchedule: null });
    expect(await rowCounts(t.db)).toEqual(before);
    await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { retrySchedule: [0, 6_000] } }), 200);
  });

  it('refuses to start with a MAX_DELIVERY_AGE shorter than RETRY_SCHEDULE_MS, with a message naming both', async () => {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
      cwd: resolve(__dirname, '..'),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'test',
        ADMIN_API_KEY: ADMIN_KEY,
        SECRET_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        DATABASE_URL: t.db.url,
        PORT: '0',
        MAX_DELIVERY_AGE: '30m',
        RETRY_SCHEDULE_MS: '0,5m,1h',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolveExit) => child.once('close', resolveExit));
    expect(code).toBe(1);
    expect(output).toContain('MAX_DELIVERY_AGE (30m) must be at least the 65m that RETRY_SCHEDULE_MS adds up to');
  }, 60_000);
});
