import { Client } from 'pg';
import { newId, newIdAtTimeOf } from '../src/common/ids';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createWebhook, deliveriesOf, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * Deleting an endpoint deletes its deliveries, pending and ended, through the real app on a real
 * PostgreSQL: the queue's by its foreign key, the log's by a trigger on `webhooks`, the log having
 * no foreign keys (docs/architecture.md, "Storage"), also while a worker moves one of them from
 * the queue to the log.
 */
describe('deleting an endpoint', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp();
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const logRowsOf = async (webhookId: string): Promise<number> =>
    (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM delivery_log WHERE webhook_id = $1', [webhookId]))[0].n;

  it("writes the log without looking up the store or the endpoint, and the queue without its store's key", async () => {
    const keys = await t.db.query<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint WHERE conrelid IN ('delivery_log'::regclass, 'delivery_queue'::regclass) AND contype = 'f'`,
    );
    expect(keys.map((key) => key.name)).toEqual(['delivery_queue_webhook_id_fkey']);
  });

  it("deletes the endpoint's ended deliveries with it, and no other endpoint's", async () => {
    const gone = await createWebhook(t, `${receiver.url}/gone`);
    const kept = await createWebhook(t, `${receiver.url}/kept`);
    await publish(t, 'order.created', orderData(1));
    await publish(t, 'order.created', orderData(2));
    for (const endpoint of [gone, kept]) {
      await eventually(
        () => deliveriesOf(t, endpoint.id),
        (list) => list.length === 2 && list.every((d) => d.status === 'succeeded'),
        { what: `two deliveries to ${endpoint.url} succeeded` },
      );
    }
    expect(await logRowsOf(gone.id)).toBe(2);

    expect((await t.api(`/webhooks/${gone.id}`, { method: 'DELETE' })).status).toBe(204);

    expect(await logRowsOf(gone.id)).toBe(0);
    expect(await logRowsOf(kept.id)).toBe(2);
    const [{ n }] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1', [gone.id]);
    expect(n).toBe(0);
  });

  it('also deletes the delivery an outcome was moving to the log meanwhile', async () => {
    // An endpoint that answers nothing (paused), so that the app itself sends nothing to it.
    const endpoint = await createWebhook(t, `${receiver.url}/racing`);
    expect((await t.api(`/webhooks/${endpoint.id}`, { method: 'PUT', json: { isActive: false } })).status).toBe(200);
    const [{ store_id: storeId }] = await t.db.query<{ store_id: string }>('SELECT store_id FROM webhooks WHERE id = $1', [endpoint.id]);
    const eventId = newId('evt');
    const deliveryId = newIdAtTimeOf('del', eventId);
    await t.db.query(
      `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
       VALUES ($1, $2, $3, $4, 'order.created', now() + interval '1 hour')`,
      [deliveryId, storeId, eventId, endpoint.id],
    );

    // What an outcome does to a delivery that ended: out of the queue, into the log, in one transaction.
    const worker = new Client({ connectionString: t.db.url });
    await worker.connect();
    try {
      await worker.query('BEGIN');
      await worker.query(
        `WITH ended AS (DELETE FROM delivery_queue WHERE id = $1 RETURNING *)
         INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
         SELECT id, store_id, event_id, webhook_id, event_type, 'succeeded', 1 FROM ended`,
        [deliveryId],
      );
      const deletion = t.api(`/webhooks/${endpoint.id}`, { method: 'DELETE' });
      // The deletion waits for the outcome's lock on the queue row.
      await eventually(
        async () =>
          (
            await t.db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          )[0].n,
        (waiting) => waiting > 0,
        { what: 'the deletion waiting for the outcome' },
      );
      await worker.query('COMMIT');
      expect((await deletion).status).toBe(204);
    } finally {
      await worker.end();
    }

    expect(await logRowsOf(endpoint.id)).toBe(0);
  });
});
