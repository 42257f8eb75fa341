import { HttpException } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EVENT_CATALOGUE } from '../src/catalogue/event-catalogue';
import { buildEnvelope } from '../src/catalogue/envelope';
import { EventPublisher } from '../src/events/event-publisher';
import { EventRepository } from '../src/dispatch/store/event.repository';
import { EventError, EventErrorCode } from '../src/events/event.errors';
import { StoreOrdersModule } from './support/store-orders/store-orders.module';
import { StoreOrdersService } from './support/store-orders/store-orders.service';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createWebhook, delivery, deliveriesOf, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

async function count(t: TestApp, table: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return row.n;
}

describe('publishing (POST /events and EventPublisher)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let otherStoreKey: string;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,300,300' }, imports: [StoreOrdersModule] });
    receiver = await Receiver.start();
    const store = (await (await t.api('/stores', { method: 'POST', json: { name: 'Other store' } })).json()) as { id: string };
    const key = await t.api(`/stores/${store.id}/api-keys`, {
      method: 'POST',
      json: { name: 'other', scopes: ['webhooks:read', 'webhooks:write', 'events:write'] },
    });
    otherStoreKey = ((await key.json()) as { key: string }).key;
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it("fans out to the store's active endpoints subscribed to the type, and to no other", async () => {
    const subscribed = await createWebhook(t, `${receiver.url}/fan/subscribed`, ['product.created', 'order.created']);
    await createWebhook(t, `${receiver.url}/fan/inactive`, ['product.created'], { isActive: false });
    await createWebhook(t, `${receiver.url}/fan/other-type`, ['order.created']);
    await createWebhook(t, `${receiver.url}/fan/other-store`, ['product.created'], {}, otherStoreKey);

    const data = { id: 'prod_1', name: 'Mug', sku: 'MUG-1', price: 1200, status: 'ACTIVE' };
    const res = await t.api('/events', { method: 'POST', json: { type: 'product.created', data } });
    expect(res.status).toBe(202);
    const event = (await res.json()) as Record<string, unknown>;
    expect(event).toEqual({ id: expect.stringMatching(/^evt_/), type: 'product.created', timestamp: expect.any(String), deliveries: 1 });

    await receiver.waitFor(1, (r) => r.path === '/fan/subscribed');
    const view = (await (await t.api(`/events/${event.id as string}`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ id: event.id, type: 'product.created', timestamp: event.timestamp, data });
    expect(view.deliveries).toEqual([expect.objectContaining({ webhookId: subscribed.id, eventId: event.id })]);
    await eventually(
      () => deliveriesOf(t, subscribed.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(receiver.requests.filter((r) => r.path.startsWith('/fan/') && r.path !== '/fan/subscribed')).toEqual([]);

    // The other store's key cannot see this store's event.
    expect((await t.api(`/events/${event.id as string}`, { key: otherStoreKey })).status).toBe(404);
  });

  it('answers a repeated Idempotency-Key with the first event (200) and delivers nothing again', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/idem`, ['payment.received']);
    const data = { orderId: 'ord_9', orderNumber: 'ORD-9', amount: 100, currency: 'EUR', paymentMethod: 'CARD', status: 'CAPTURED' };
    const first = await t.api('/events', {
      method: 'POST',
      json: { type: 'payment.received', data },
      headers: { 'Idempotency-Key': 'pay-9' },
    });
    const second = await t.api('/events', {
      method: 'POST',
      json: { type: 'payment.received', data },
      headers: { 'Idempotency-Key': 'pay-9' },
    });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const [a, b] = [await first.json(), await second.json()];
    expect(b).toEqual(a);

    // The same data with its keys in another order is the same request.
    const reordered = Object.fromEntries(Object.entries(data).reverse());
    const third = await t.api('/events', {
      method: 'POST',
      json: { type: 'payment.received', data: reordered },
      headers: { 'Idempotency-Key': 'pay-9' },
    });
    expect(third.status).toBe(200);

    // The same key in another store is another event.
    await createWebhook(t, `${receiver.url}/idem-other`, ['payment.received'], {}, otherStoreKey);
    const other = await t.api('/events', {
      method: 'POST',
      json: { type: 'payment.received', data },
      headers: { 'Idempotency-Key': 'pay-9' },
      key: otherStoreKey,
    });
    expect(other.status).toBe(202);

    // Concurrent repeats race to one event.
    const racing = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.api('/events', { method: 'POST', json: { type: 'payment.received', data }, headers: { 'Idempotency-Key': 'pay-10' } }),
      ),
    );
    const bodies = await Promise.all(racing.map((r) => r.json() as Promise<{ id: string }>));
    expect(new Set(bodies.map((body) => body.id)).size).toBe(1);
    expect(racing.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 202]);

    await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === 'succeeded'),
    );
    expect(receiver.to('/idem')).toHaveLength(2);

    // Past 24 hours the key is free again.
    await t.db.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'pay-9' AND store_id = 'st_default'`,
    );
    const later = await t.api('/events', {
      method: 'POST',
      json: { type: 'payment.received', data },
      headers: { 'Idempotency-Key': 'pay-9' },
    });
    expect(later.status).toBe(202);
    expect(((await later.json()) as { id: string }).id).not.toBe((a as { id: string }).id);
  });

  it('refuses an Idempotency-Key reused for another event with 422, publishing nothing', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/idem-reuse`, ['payment.received', 'order.created']);
    const data = {
      orderId: 'ord_11',
      orderNumber: 'ORD-11',
      amount: 100,
      currency: 'EUR',
      paymentMethod: 'CARD' as const,
      status: 'CAPTURED' as const,
    };
    const first = await t.api('/events', {
      method: 'POST',
      json: { type: 'payment.received', data },
      headers: { 'Idempotency-Key': 'pay-11' },
    });
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    const eventsBefore = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events`);

    for (const body of [
      { type: 'payment.received', data: { ...data, amount: 101 } },
      { type: 'order.created', data: orderData(11) },
    ]) {
      const reused = await t.api('/events', { method: 'POST', json: body, headers: { 'Idempotency-Key': 'pay-11' } });
      expect(reused.status).toBe(422);
      expect(reused.headers.get('idempotent-replayed')).toBeNull();
      expect(await reused.json()).toMatchObject({
        statusCode: 422,
        message: `Idempotency-Key "pay-11" was already used for event ${id} with a different type or data; use a new key for a new event`,
      });
    }
    expect(await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events`)).toEqual(eventsBefore);

    // The publisher inside the application refuses it the same way, by class and code.
    const publisher = t.app.get(EventPublisher);
    await expect(
      publisher.publish('st_default', 'payment.received', { ...data, amount: 102 }, { idempotencyKey: 'pay-11' }),
    ).rejects.toMatchObject({
      constructor: EventError,
      code: EventErrorCode.IdempotencyKeyReused,
    });
    await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows.length === 1 && rows[0].status === 'succeeded',
    );
  });

  it('rejects data that does not match the type, an unknown type and a bad Idempotency-Key, storing nothing', async () => {
    await createWebhook(t, `${receiver.url}/never`, ['order.created']);
    const before = [await count(t, 'events'), await count(t, 'deliveries')];
    const cases: Array<[unknown, RegExp]> = [
      [{ type: 'order.created', data: { ...orderData(), total: '12' } }, /data\.total/],
      [{ type: 'order.created', data: { ...orderData(), total: 1.5 } }, /data\.total/],
      [{ type: 'order.created', data: { ...orderData(), currency: 'euro' } }, /data\.currency/],
      [{ type: 'order.created', data: { ...orderData(), status: 'LOST' } }, /data\.status/],
      [{ type: 'order.created', data: { ...orderData(), surprise: true } }, /data\.surprise/],
      [{ type: 'order.created', data: { id: 'o' } }, /data\.orderNumber/],
      [{ type: 'order.created', data: [] }, /data/],
      [{ type: 'order.created' }, /data/],
      [{ type: 'order.exploded', data: orderData() }, /type/],
      [{ type: 'webhook.test', data: { webhookId: 'wh_1', name: 'x', message: 'y' } }, /type/],
      [{ type: 'order.created', data: orderData(), extra: 1 }, /extra/],
    ];
    for (const [body, pattern] of cases) {
      const res = await t.api('/events', { method: 'POST', json: body });
      expect(res.status).toBe(400);
      const error = (await res.json()) as { statusCode: number; error: string; message: string | string[] };
      expect(error).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect([error.message].flat().join(' ')).toMatch(pattern);
    }
    const badKey = await t.api('/events', {
      method: 'POST',
      json: { type: 'order.created', data: orderData() },
      headers: { 'Idempotency-Key': 'x'.repeat(300) },
    });
    expect(badKey.status).toBe(400);
    expect([await count(t, 'events'), await count(t, 'deliveries')]).toEqual(before);
    expect(receiver.to('/never')).toEqual([]);
  });

  it('publishes in the caller’s transaction: a rollback leaves no event and delivers nothing', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/outbox`, ['order.cancelled']);
    const publisher = t.app.get(EventPublisher);
    const dataSource = t.app.get(DataSource);
    const before = await count(t, 'events');

    await expect(
      dataSource.transaction(async (manager) => {
        const event = await publisher.publish('st_default', 'order.cancelled', { ...orderData(20), status: 'CANCELLED' }, { manager });
        expect(event.deliveries).toBe(1);
        throw new Error('the order could not be cancelled after all');
      }),
    ).rejects.toThrow('could not be cancelled');
    expect(await count(t, 'events')).toBe(before);

    // A committed event sent after the rolled-back one arrives alone.
    const committed = await dataSource.transaction((manager) =>
      publisher.publish('st_default', 'order.cancelled', { ...orderData(21), status: 'CANCELLED' }, { manager }),
    );
    const [arrived] = await receiver.waitFor(1, (r) => r.path === '/outbox');
    expect(arrived.headers['x-webhook-id']).toBe(committed.id);
    await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(receiver.to('/outbox')).toHaveLength(1);
  });

  it("hands a group commit's deliveries to the worker within its free slots and per-endpoint limits", async () => {
    const [full, partial, free] = await Promise.all(
      ['full', 'partial', 'free'].map((name) => createWebhook(t, `${receiver.url}/hand-off/${name}`, ['order.status_changed'])),
    );
    const [{ storeId }] = await t.db.query<{ storeId: string }>(`SELECT store_id AS "storeId" FROM webhooks WHERE id = $1`, [full.id]);
    const events = Array.from({ length: 10 }, (_, i) => {
      const { envelope, body } = buildEnvelope('order.status_changed', {
        ...EVENT_CATALOGUE['order.status_changed'].example,
        id: `ord_${i}`,
      });
      return { id: envelope.id, storeId, type: envelope.type, body, createdAt: new Date(envelope.timestamp) };
    });
    // A worker of its own (token), leasing for a minute: this process's worker leaves those rows alone.
    const offer = {
      excluded: [full.id],
      partial: new Map([[partial.id, 1]]),
      perEndpoint: 4,
      excludedStores: [],
      partialStores: new Map(),
      perStore: 100,
      leaseMs: 60_000,
      leaseToken: 'hand-off-test',
    };
    const repository = t.app.get(EventRepository);

    const first = await repository.publishMany(events.slice(0, 5), 0, { ...offer, limit: 100 });
    expect([...first.counts.values()]).toEqual([3, 3, 3, 3, 3]);
    const byEndpoint = (leased: Array<{ webhookId: string }>, id: string): number => leased.filter((d) => d.webhookId === id).length;
    // Nothing for the endpoint with no free slot, 1 for the one with 1, at most 4 for any other.
    expect([byEndpoint(first.leased, full.id), byEndpoint(first.leased, partial.id), byEndpoint(first.leased, free.id)]).toEqual([0, 1, 4]);
    expect(first.leased.every((d) => d.url === `${receiver.url}/hand-off/${d.webhookId === partial.id ? 'partial' : 'free'}`)).toBe(true);

    // And never more than the worker's free slots in all.
    const second = await repository.publishMany(events.slice(5), 0, { ...offer, limit: 2 });
    expect(second.leased).toHaveLength(2);

    const rows = await t.db.query<{ id: string; attempts: number; leaseToken: string | null }>(
      `SELECT id, attempt_count AS attempts, lease_token AS "leaseToken" FROM deliveries WHERE lease_token = 'hand-off-test'`,
    );
    expect(rows.map((row) => row.id).sort()).toEqual([...first.leased, ...second.leased].map((d) => d.id).sort());
    // Leased as a claim leases: the first attempt counted, due again when the lease ends.
    expect(rows.every((row) => row.attempts === 1)).toBe(true);
    // The others were written due, for any worker: every one of them arrives.
    await receiver.waitFor(30 - rows.length, (r) => r.path.startsWith('/hand-off/'), 10_000);
  });

  it('lets another module publish through the injected EventPublisher (the store-orders example)', async () => {
    await createWebhook(t, `${receiver.url}/orders`, ['order.created']);
    const event = await t.app
      .get(StoreOrdersService)
      .placeOrder('st_default', { id: 'ord_77', orderNumber: 'ORD-77', total: 100, currency: 'EUR' });
    const [request] = await receiver.waitFor(1, (r) => r.path === '/orders');
    expect(JSON.parse(request.body.toString('utf8'))).toMatchObject({
      id: event.id,
      type: 'order.created',
      data: { id: 'ord_77', status: 'PENDING' },
    });
  });

  it('throws EventErrors that another module catches by class and code, not by HTTP status', async () => {
    const publisher = t.app.get(EventPublisher);
    const codeOf = (promise: Promise<unknown>) =>
      promise.then(
        () => 'published',
        (error: unknown) => (error instanceof EventError && !(error instanceof HttpException) ? error.code : error),
      );
    expect(await codeOf(publisher.publish('st_nope', 'order.created', orderData() as never))).toBe(EventErrorCode.StoreNotFound);
    expect(await codeOf(publisher.publish('st_default', 'order.shipped' as never, orderData() as never))).toBe(EventErrorCode.UnknownType);
    const invalid = await publisher.publish('st_default', 'order.created', { id: 'ord_1' } as never).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(EventError);
    expect((invalid as EventError).code).toBe(EventErrorCode.InvalidData);
    expect((invalid as EventError).problems.length).toBeGreaterThan(0);
  });

  it('stops delivering to a deleted endpoint at once, pending retries included', async () => {
    receiver.respondWith((request, res) => res.writeHead(request.path.startsWith('/gone') ? 500 : 200).end());
    const doomed = await createWebhook(t, `${receiver.url}/gone/doomed`, ['stock.low']);
    const witness = await createWebhook(t, `${receiver.url}/gone/witness`, ['stock.low']);
    await publish(t, 'stock.low', { productId: 'p1', sku: 'S1', name: 'Mug', quantity: 2, threshold: 5 });
    await receiver.waitFor(1, (r) => r.path === '/gone/doomed');
    expect((await t.api(`/webhooks/${doomed.id}`, { method: 'DELETE' })).status).toBe(204);

    // The witness's retries (300 ms apart) show the time passing during which the doomed one would have retried.
    await receiver.waitFor(3, (r) => r.path === '/gone/witness');
    await eventually(
      () => deliveriesOf(t, witness.id),
      (rows) => rows[0]?.status === 'failed',
    );
    expect(receiver.to('/gone/doomed')).toHaveLength(1);
    expect((await t.api(`/webhooks/${doomed.id}/deliveries`)).status).toBe(404);
    receiver.respondStatus(200);
  });

  it('ends an inactive endpoint’s pending deliveries as failed, and retries them once it is active again', async () => {
    receiver.respondWith((request, res) => res.writeHead(request.path === '/paused' ? 500 : 200).end());
    const webhook = await createWebhook(t, `${receiver.url}/paused`, ['customer.created']);
    await publish(t, 'customer.created', { id: 'cus_1', email: 'a@example.com', firstName: 'A', lastName: 'B' });
    await receiver.waitFor(1, (r) => r.path === '/paused');
    const paused = await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: false } });
    expect(paused.status).toBe(200);
    expect(await paused.json()).toMatchObject({ isActive: false, name: `endpoint ${receiver.url}/paused`, events: ['customer.created'] });

    const [row] = await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'failed',
    );
    expect(row.lastError).toMatch(/inactive/);
    const refused = await t.api(`/deliveries/${row.id}/retry`, { method: 'POST' });
    expect(refused.status).toBe(409);
    expect((await t.api(`/webhooks/${webhook.id}/deliveries/retry-failed`, { method: 'POST' })).status).toBe(409);
    // Nothing new is delivered to it while inactive.
    expect((await publish(t, 'customer.created', { id: 'cus_2', email: 'b@example.com', firstName: 'B', lastName: 'C' })).deliveries).toBe(
      0,
    );

    receiver.respondStatus(200);
    await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: true } });
    const retried = await t.api(`/webhooks/${webhook.id}/deliveries/retry-failed`, { method: 'POST', json: {} });
    expect(retried.status).toBe(202);
    expect(await retried.json()).toEqual({ queued: 1 });
    const done = await eventually(
      () => delivery(t, row.id),
      (d) => d.status === 'succeeded',
    );
    expect(done.attempts!.at(-1)!.statusCode).toBe(200);
  });

  it('retries only the failed deliveries of events published since a given time', async () => {
    receiver.respondWith((request, res) => res.writeHead(request.path === '/since' ? 500 : 200).end());
    const webhook = await createWebhook(t, `${receiver.url}/since`, ['delivery.completed']);
    const older = await publish(t, 'delivery.completed', { orderId: 'o1', orderNumber: 'ORD-1' });
    const since = new Date(Date.parse(older.timestamp) + 1).toISOString();
    await publish(t, 'delivery.completed', { orderId: 'o2', orderNumber: 'ORD-2' });
    const rows = await eventually(
      () => deliveriesOf(t, webhook.id, '?status=failed'),
      (list) => list.length === 2,
    );
    expect(rows[1].eventId).toBe(older.id);

    receiver.respondStatus(200);
    const res = await t.api(`/webhooks/${webhook.id}/deliveries/retry-failed`, { method: 'POST', json: { since } });
    expect(await res.json()).toEqual({ queued: 1 });
    await eventually(
      () => deliveriesOf(t, webhook.id, '?status=succeeded'),
      (list) => list.length === 1,
    );
    expect((await deliveriesOf(t, webhook.id, '?status=failed')).map((d) => d.id)).toEqual([rows[1].id]);
    const bad = await t.api(`/webhooks/${webhook.id}/deliveries/retry-failed`, { method: 'POST', json: { since: 'last week' } });
    expect(bad.status).toBe(400);
  });

  it('lists deliveries newest first with filters and a cursor', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/paged`, ['order.created', 'order.updated']);
    for (let i = 0; i < 5; i++) await publish(t, i % 2 ? 'order.updated' : 'order.created', orderData(100 + i));
    await eventually(
      () => deliveriesOf(t, webhook.id, '?status=succeeded'),
      (rows) => rows.length === 5,
    );

    const page1 = (await (await t.api(`/webhooks/${webhook.id}/deliveries?limit=2`)).json()) as {
      data: Array<{ id: string }>;
      nextCursor: string;
    };
    const page2 = (await (await t.api(`/webhooks/${webhook.id}/deliveries?limit=2&cursor=${page1.nextCursor}`)).json()) as typeof page1;
    const page3 = (await (await t.api(`/webhooks/${webhook.id}/deliveries?limit=2&cursor=${page2.nextCursor}`)).json()) as {
      data: Array<{ id: string }>;
      nextCursor: string | null;
    };
    const ids = [...page1.data, ...page2.data, ...page3.data].map((d) => d.id);
    expect(ids).toHaveLength(5);
    expect([...ids].sort().reverse()).toEqual(ids);
    expect(page3.nextCursor).toBeNull();
    expect(await deliveriesOf(t, webhook.id, '?eventType=order.updated')).toHaveLength(2);
    for (const bad of ['?status=lost', '?eventType=order.exploded', '?limit=0', '?limit=201', '?cursor=garbage']) {
      expect((await t.api(`/webhooks/${webhook.id}/deliveries${bad}`)).status).toBe(400);
    }
    expect((await t.api(`/webhooks/${webhook.id}/deliveries`, { key: otherStoreKey })).status).toBe(404);
    expect((await t.api(`/deliveries/${ids[0]}`, { key: otherStoreKey })).status).toBe(404);
    expect((await t.api(`/deliveries/${ids[0]}/retry`, { method: 'POST', key: otherStoreKey })).status).toBe(404);
  });
});
