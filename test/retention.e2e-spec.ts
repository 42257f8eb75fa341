import { Pool } from 'pg';
import { newId, newIdAtTimeOf } from '../src/common/ids';
import { PartitionMaintenance } from '../src/dispatch/retention/partition-maintenance';
import { DAY_MS, dayOf, partitionName } from '../src/dispatch/retention/partition-plan';
import { RetentionScheduler } from '../src/dispatch/retention/retention-scheduler';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createWebhook, delivery, orderData } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * Retention against the real app: a day past RETENTION_DAYS goes whole, a day holding a pending
 * delivery stays, and that delivery is still delivered.
 */
describe('retention', () => {
  let t: TestApp;
  let receiver: Receiver;
  let pool: Pool;
  const today = dayOf(Date.now());

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({ env: { RETENTION_DAYS: '30' } });
    pool = new Pool({ connectionString: t.db.url, max: 2 });
    await new PartitionMaintenance(pool).ensureDays([today - 45, today - 40]);
  });

  afterAll(async () => {
    await pool?.end();
    await t?.close();
    await receiver?.close();
  });

  /** An event published on `day`, as the service would have written it, with one delivery to `webhookId`. */
  async function eventOn(day: number, webhookId: string, status: 'pending' | 'succeeded'): Promise<{ event: string; delivery: string }> {
    const event = newId('evt', day * DAY_MS + 7_200_000);
    const deliveryId = newIdAtTimeOf('del', event);
    const body = JSON.stringify({
      id: event,
      type: 'order.created',
      timestamp: new Date(day * DAY_MS + 7_200_000).toISOString(),
      data: orderData(3),
    });
    await t.db.query(`INSERT INTO events (id, store_id, type, body, created_at) VALUES ($1, 'st_default', 'order.created', $2, $3)`, [
      event,
      body,
      new Date(day * DAY_MS + 7_200_000),
    ]);
    if (status === 'pending') {
      await t.db.query(
        `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, attempt_count, next_attempt_at)
         VALUES ($1, 'st_default', $2, $3, 'order.created', 0, now() + interval '1 hour')`,
        [deliveryId, event, webhookId],
      );
    } else {
      await t.db.query(
        `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
         VALUES ($1, 'st_default', $2, $3, 'order.created', 'succeeded', 1)`,
        [deliveryId, event, webhookId],
      );
      await t.db.query(
        `INSERT INTO delivery_attempts (delivery_id, store_id, number, started_at, duration_ms, status_code) VALUES ($1, 'st_default', 1, $2, 8, 200)`,
        [deliveryId, new Date(day * DAY_MS + 7_200_000)],
      );
    }
    return { event, delivery: deliveryId };
  }

  it('drops a day past retention, keeps a day with a pending delivery, and delivers that delivery', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/kept`);
    const gone = await eventOn(today - 45, webhook.id, 'succeeded');
    const kept = await eventOn(today - 40, webhook.id, 'pending');
    await eventOn(today - 40, webhook.id, 'succeeded');

    const report = await t.app.get(RetentionScheduler).run();

    expect(report?.keptPending).toEqual([today - 40]);
    expect(report?.dropped.map((d) => [d.table, d.day, d.rows])).toEqual([
      ['delivery_attempts', today - 45, 1],
      ['delivery_log', today - 45, 1],
      ['events', today - 45, 1],
    ]);
    expect((await t.api(`/events/${gone.event}`)).status).toBe(404);
    expect((await t.api(`/deliveries/${gone.delivery}`)).status).toBe(404);
    expect((await t.api(`/events/${kept.event}`)).status).toBe(200);
    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(metrics).toContain('hookline_retention_partitions_dropped_total{table="delivery_log"} 1');
    expect(metrics).toContain('hookline_retention_rows_removed_total{table="events"} 1');

    // The kept delivery comes due and goes out, from the queue; its day's partition is still there.
    await t.db.query(`UPDATE delivery_queue SET next_attempt_at = now() WHERE id = $1`, [kept.delivery]);
    const [request] = await receiver.waitFor(1, (r) => r.path === '/kept');
    expect(request.headers['x-webhook-id']).toBe(kept.event);
    await eventually(
      () => delivery(t, kept.delivery),
      (row) => row.status === 'succeeded',
    );
    const tables = await t.db.query<{ relname: string }>(`SELECT relname FROM pg_class WHERE relname = $1`, [
      partitionName('delivery_log', today - 40),
    ]);
    expect(tables).toHaveLength(1);

    // Ended, its day goes on the next run.
    const next = await t.app.get(RetentionScheduler).run();
    expect(next?.dropped.map((d) => [d.table, d.day, d.rows])).toEqual([
      ['delivery_attempts', today - 40, 2],
      ['delivery_log', today - 40, 2],
      ['events', today - 40, 2],
    ]);
    expect((await t.api(`/events/${kept.event}`)).status).toBe(404);
  });
});
