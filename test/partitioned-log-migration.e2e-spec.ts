import { DataSource } from 'typeorm';
import { newId, newIdAtTimeOf } from '../src/common/ids';
import { dataSourceOptions, MIGRATIONS } from '../src/database/data-source-options';
import { PartitionedLog1795800000000 } from '../src/database/migrations/1795800000000-PartitionedLog';
import { HotQueue1797000000000 } from '../src/database/migrations/1797000000000-HotQueue';
import { DAY_MS, dayOf } from '../src/dispatch/retention/partition-plan';
import { SecretCipher } from '../src/webhooks/secret-cipher';
import { startApp, TEST_ENCRYPTION_KEY, TestApp } from './support/app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { createWebhook, deliveriesOf, delivery, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * Rows of the log, as text, in an order that does not depend on the table's layout. An ended
 * delivery's `cycle_attempts` is left out: the log does not keep it (the view shows 0).
 */
const SNAPSHOT = `
  SELECT
    (SELECT string_agg(concat_ws('|', id, store_id, type, body, created_at), E'\\n' ORDER BY id) FROM events) AS events,
    (SELECT string_agg(d::text, E'\\n' ORDER BY d.id) FROM (
       SELECT id, store_id, event_id, webhook_id, event_type, status, attempt_count,
         CASE WHEN status = 'pending' THEN cycle_attempts END AS cycle_attempts, next_attempt_at, lease_token, last_status_code,
         last_error, created_at, updated_at, ordered, restarted_at
       FROM deliveries) d) AS deliveries,
    (SELECT string_agg(concat_ws('|', delivery_id, number, trigger, started_at, duration_ms, status_code, error, response_body), E'\\n'
       ORDER BY delivery_id, number) FROM delivery_attempts) AS attempts`;

/**
 * A database filled under the schema before partitioning, over several days, upgraded by the app
 * itself at start: every row is still there and the app serves and delivers.
 */
describe('upgrading a filled database to the partitioned log', () => {
  let db: TestDatabase;
  let t: TestApp;
  let receiver: Receiver;
  const today = dayOf(Date.now());
  const pendingEvent = newId('evt', (today - 2) * DAY_MS + 3_600_000);
  const pendingDelivery = newIdAtTimeOf('del', pendingEvent);
  const webhookId = newId('wh');
  let before: Record<string, string>;

  beforeAll(async () => {
    receiver = await Receiver.start();
    db = await createTestDatabase();
    // Every migration but the partitioning and what needs the log partitioned (the queue taken out
    // of it, and every one after): those run at the app's start, in order.
    const previous = MIGRATIONS.slice(0, MIGRATIONS.indexOf(HotQueue1797000000000)).filter(
      (migration) => migration !== PartitionedLog1795800000000,
    );
    const dataSource = await new DataSource({ ...dataSourceOptions(db.url, 2), migrations: previous }).initialize();
    await dataSource.runMigrations();
    const sealed = new SecretCipher(Buffer.from(TEST_ENCRYPTION_KEY, 'base64')).encrypt('whsec_migrated', webhookId);
    await dataSource.query(
      `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ($1, 'st_default', 'old', $2, '{order.created}', $3)`,
      [webhookId, `${receiver.url}/old`, sealed],
    );
    // Four days of finished deliveries, each with its attempt; one delivery still pending.
    for (let day = today - 3; day <= today; day++) {
      await dataSource.query(
        `WITH ev AS (
           INSERT INTO events (id, store_id, type, body, idempotency_key, created_at)
           SELECT 'evt_' || t.digits || lpad(g::text, 16, '0'), 'st_default', 'order.created', '{"n":' || g || '}',
             CASE WHEN g = 1 AND $2 THEN 'key-' || $1 END, to_timestamp(($1::bigint * 86400000 + g * 1000) / 1000.0)
           FROM generate_series(1, 50) g, LATERAL (SELECT $3::text[] AS all_digits) a, LATERAL (SELECT a.all_digits[g] AS digits) t
           RETURNING id, created_at
         ), dl AS (
           INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, status, attempt_count, cycle_attempts, last_status_code, created_at)
           SELECT 'del_' || substr(ev.id, 5, 10) || w.n || substr(ev.id, 16), 'st_default', ev.id, $4, 'order.created', 'succeeded', 1, 1, 200, ev.created_at
           FROM ev, (VALUES ('a'), ('b')) AS w(n)
           RETURNING id, created_at
         )
         INSERT INTO delivery_attempts (delivery_id, number, started_at, duration_ms, status_code, response_body)
         SELECT id, 1, created_at, 12, 200, 'ok' FROM dl`,
        [day, day === today, Array.from({ length: 50 }, (_, i) => newId('evt', day * DAY_MS + (i + 1) * 1000).slice(4, 14)), webhookId],
      );
    }
    await dataSource.query(`INSERT INTO events (id, store_id, type, body) VALUES ($1, 'st_default', 'order.created', $2)`, [
      pendingEvent,
      JSON.stringify({ id: pendingEvent, type: 'order.created', timestamp: new Date().toISOString(), data: orderData(7) }),
    ]);
    await dataSource.query(
      `INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, next_attempt_at) VALUES ($1, 'st_default', $2, $3, 'order.created', now() + interval '1 hour')`,
      [pendingDelivery, pendingEvent, webhookId],
    );
    // The endpoint's own rows, keyed by the endpoint alone before the upgrade.
    await dataSource.query(`INSERT INTO endpoint_health (webhook_id, failing_since, failures) VALUES ($1, now(), 3)`, [webhookId]);
    await dataSource.query(`INSERT INTO endpoint_rate_windows (webhook_id, window_start, requests) VALUES ($1, now(), 2)`, [webhookId]);
    before = (await dataSource.query(SNAPSHOT))[0];
    await dataSource.destroy();

    t = await startApp({ db });
  });

  afterAll(async () => {
    await t?.close();
    await db?.drop();
    await receiver?.close();
  });

  it('keeps every row, each in its day partition, attempts carrying their store', async () => {
    const [after] = await db.query<Record<string, string>>(SNAPSHOT);
    expect(after).toEqual(before);
    expect(after.events.split('\n')).toHaveLength(201);
    expect(after.attempts.split('\n')).toHaveLength(400);
    const [{ misplaced }] = await db.query<{ misplaced: number }>(
      `SELECT count(*)::int AS misplaced FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE a.store_id <> d.store_id`,
    );
    expect(misplaced).toBe(0);
    const partitions = await db.query<{ name: string; n: number }>(
      `SELECT tableoid::regclass::text AS name, count(*)::int AS n FROM events GROUP BY 1 ORDER BY 1`,
    );
    expect(partitions.map((p) => p.name)).toHaveLength(4);
    expect(partitions.every((p) => /^events_p\d{8}$/.test(p.name))).toBe(true);
    // The ended deliveries in the log's day partitions, the pending one alone in the queue.
    const logPartitions = await db.query<{ name: string; n: number }>(
      `SELECT tableoid::regclass::text AS name, count(*)::int AS n FROM delivery_log GROUP BY 1 ORDER BY 1`,
    );
    expect(logPartitions).toHaveLength(4);
    expect(logPartitions.every((p) => /^delivery_log_p\d{8}$/.test(p.name) && p.n === 100)).toBe(true);
    expect(await db.query(`SELECT id FROM delivery_queue`)).toEqual([{ id: pendingDelivery }]);
    expect(await db.query(`SELECT key, store_id FROM idempotency_keys`)).toEqual([{ key: `key-${today}`, store_id: 'st_default' }]);
  });

  it("gives the endpoint's health and rate window rows their endpoint's store, in their primary key", async () => {
    expect(await db.query(`SELECT webhook_id, store_id, failures FROM endpoint_health`)).toEqual([
      { webhook_id: webhookId, store_id: 'st_default', failures: 3 },
    ]);
    expect(await db.query(`SELECT webhook_id, store_id, requests FROM endpoint_rate_windows`)).toEqual([
      { webhook_id: webhookId, store_id: 'st_default', requests: 2 },
    ]);
    const keys = await db.query<{ table: string; columns: string }>(
      `SELECT c.conrelid::regclass::text AS table, string_agg(a.attname, ',' ORDER BY a.attname) AS columns
       FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
       WHERE c.contype IN ('p', 'f') AND c.conrelid IN ('endpoint_health'::regclass, 'endpoint_rate_windows'::regclass)
       GROUP BY c.conrelid, c.conname, c.contype ORDER BY 1, 2`,
    );
    expect(keys).toEqual([
      { table: 'endpoint_health', columns: 'store_id,webhook_id' },
      { table: 'endpoint_health', columns: 'store_id,webhook_id' },
      { table: 'endpoint_rate_windows', columns: 'store_id,webhook_id' },
      { table: 'endpoint_rate_windows', columns: 'store_id,webhook_id' },
    ]);
  });

  it('serves the migrated events and delivers the pending delivery', async () => {
    const res = await t.api(`/events/${pendingEvent}`);
    expect(res.status).toBe(200);
    await db.query(`UPDATE delivery_queue SET next_attempt_at = now() WHERE id = $1`, [pendingDelivery]);
    const [request] = await receiver.waitFor(1, (r) => r.path === '/old');
    expect(request.headers['x-webhook-id']).toBe(pendingEvent);
    await eventually(
      () => delivery(t, pendingDelivery),
      (row) => row.status === 'succeeded',
    );
  });

  it('publishes and delivers new events', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/new`);
    const event = await publish(t, 'order.created', orderData(8));
    const [request] = await receiver.waitFor(1, (r) => r.path === '/new');
    expect(request.headers['x-webhook-id']).toBe(event.id);
    await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
  });
});
