/**
 * Batch publishing against the real app, PostgreSQL and a real receiver: POST /events/batch and
 * EventPublisher.publishMany publish every event of a batch or none, answer in the batch's order,
 * name bad events by index, apply idempotencyKey per event and join the caller's transaction.
 */
import { DataSource } from 'typeorm';
import { EVENT_CATALOGUE } from '../src/catalogue/event-catalogue';
import { EventError, EventErrorCode } from '../src/events/event.errors';
import { EventPublisher } from '../src/events/event-publisher';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createWebhook, deliveriesOf, orderData } from './support/fixtures';
import { Receiver } from './support/receiver';

interface Entry {
  id: string;
  type: string;
  timestamp: string;
  deliveries: number;
}

const payment = EVENT_CATALOGUE['payment.received'].example;

async function counts(t: TestApp): Promise<[number, number]> {
  const [row] = await t.db.query<{ events: number; deliveries: number }>(
    `SELECT (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM deliveries) AS deliveries`,
  );
  return [row.events, row.deliveries];
}

/** The `X-Webhook-ID`s that reached `path`. */
function idsAt(receiver: Receiver, path: string): string[] {
  return receiver.to(path).map((request) => String(request.headers['x-webhook-id']));
}

describe('batch publishing (POST /events/batch and EventPublisher.publishMany)', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,300,300' } });
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('publishes every event of a batch, answers them in its order and delivers each to its subscribed endpoints', async () => {
    await createWebhook(t, `${receiver.url}/batch/orders`, ['order.created', 'order.updated']);
    await createWebhook(t, `${receiver.url}/batch/payments`, ['payment.received']);
    const events = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 2
        ? { type: 'payment.received', data: { ...payment, orderId: `ord_${i}` } }
        : { type: i % 3 === 0 ? 'order.created' : 'order.updated', data: orderData(i) },
    );
    const res = await t.api('/events/batch', { method: 'POST', json: { events } });
    expect(res.status).toBe(202);
    const { data } = (await res.json()) as { data: Entry[] };
    expect(data.map((entry) => entry.type)).toEqual(events.map((event) => event.type));
    expect(data.every((entry) => /^evt_/.test(entry.id) && entry.deliveries === 1)).toBe(true);
    expect(new Set(data.map((entry) => entry.id)).size).toBe(60);

    await receiver.waitFor(60, (r) => r.path.startsWith('/batch/'));
    const orders = data.filter((entry) => entry.type !== 'payment.received').map((entry) => entry.id);
    const payments = data.filter((entry) => entry.type === 'payment.received').map((entry) => entry.id);
    expect(idsAt(receiver, '/batch/orders').sort()).toEqual(orders.sort());
    expect(idsAt(receiver, '/batch/payments').sort()).toEqual(payments.sort());

    // Each event is stored as published: its envelope carries the data at its index.
    const view = (await (await t.api(`/events/${data[4].id}`)).json()) as { type: string; data: unknown };
    expect(view).toMatchObject({ type: 'order.updated', data: orderData(4) });
  });

  it('refuses a batch with any invalid event, naming each by its index, and stores nothing', async () => {
    await createWebhook(t, `${receiver.url}/batch/never`, ['order.created', 'order.cancelled']);
    const before = await counts(t);
    const { total: _total, ...withoutTotal } = orderData(3);
    const res = await t.api('/events/batch', {
      method: 'POST',
      json: {
        events: [
          { type: 'order.created', data: orderData(0) },
          { type: 'order.creatd', data: orderData(1) },
          { type: 'order.created', data: orderData(2) },
          { type: 'order.created', data: withoutTotal },
          { type: 'order.created', data: orderData(4), extra: true },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: [
        'events[1].type is an unknown event type: "order.creatd" (did you mean "order.created"?); see GET /event-types',
        'events[3].data.total is required',
        'events[4].extra is not allowed',
      ],
    });

    const refused: Array<[unknown, RegExp]> = [
      [{ events: [] }, /^events must hold 1 to 1,000 events \(got 0\)$/],
      [{ events: Array.from({ length: 1001 }, (_, i) => ({ type: 'order.created', data: orderData(i) })) }, /got 1001/],
      [{ events: {} }, /events must be an array/],
      [{}, /events/],
      [{ events: [{ type: 'order.created', data: orderData() }], more: 1 }, /property more should not exist/],
      [{ events: [{ type: 'order.created', data: orderData(), constructor: 1 }] }, /events\[0\]\.constructor is not allowed/],
      [
        {
          events: [
            { type: 'order.created', data: orderData(1), idempotencyKey: 'twice' },
            { type: 'order.created', data: orderData(2), idempotencyKey: 'twice' },
          ],
        },
        /events\[1\]\.idempotencyKey "twice" is also the key of events\[0\]/,
      ],
    ];
    for (const [body, pattern] of refused) {
      const answer = await t.api('/events/batch', { method: 'POST', json: body });
      expect(answer.status).toBe(400);
      expect([((await answer.json()) as { message: string | string[] }).message].flat().join(' | ')).toMatch(pattern);
    }
    expect(await counts(t)).toEqual(before);
    expect(receiver.to('/batch/never')).toEqual([]);
  });

  // A thousand deliveries to one endpoint can take more than the default 30 s on a loaded machine.
  it('takes a body over 1 MiB on the batch route (1,000 events) and answers 413 above its 10 MiB', async () => {
    await createWebhook(t, `${receiver.url}/batch/big`, ['order.cancelled']);
    // 500 characters of 3 bytes each in UTF-8: 1,000 such events are about 1.6 MB.
    const reason = '€'.repeat(500);
    const events = Array.from({ length: 1000 }, (_, i) => ({
      type: 'order.cancelled',
      data: { ...orderData(i), status: 'CANCELLED', reason },
    }));
    const body = JSON.stringify({ events });
    expect(Buffer.byteLength(body)).toBeGreaterThan(1.5 * 2 ** 20);
    const accepted = await t.api('/events/batch', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(accepted.status).toBe(202);
    expect(((await accepted.json()) as { data: Entry[] }).data).toHaveLength(1000);
    await receiver.waitFor(1000, (r) => r.path === '/batch/big', 30_000);

    const huge = JSON.stringify({ events: [{ type: 'order.created', data: { ...orderData(), id: 'x'.repeat(10 * 2 ** 20) } }] });
    const tooLarge = await t.api('/events/batch', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: huge });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message: 'Request body is larger than the 10 MiB limit',
    });
    // Every other route keeps its 1 MiB.
    const single = JSON.stringify({ type: 'order.created', data: { ...orderData(), id: 'x'.repeat(2 ** 20) } });
    const singleRes = await t.api('/events', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: single });
    expect(singleRes.status).toBe(413);
    expect(((await singleRes.json()) as { message: string }).message).toBe('Request body is larger than the 1 MiB limit');
  }, 90_000);

  it('applies idempotencyKey per event: a repeat answers the first event and delivers nothing again', async () => {
    await createWebhook(t, `${receiver.url}/batch/idem`, ['payment.received']);
    const paid = (n: number) => ({ type: 'payment.received', data: { ...payment, orderId: `ord_idem_${n}` } });
    const first = await t.api('/events/batch', {
      method: 'POST',
      json: { events: [{ ...paid(1), idempotencyKey: 'pay-1' }, { ...paid(2), idempotencyKey: 'pay-2' }, paid(3)] },
    });
    expect(first.status).toBe(202);
    const firstData = ((await first.json()) as { data: Entry[] }).data;

    // pay-2 again (its data's keys in another order), then a new event: 202, the first entry of pay-2 in its place.
    const reordered = { type: 'payment.received', data: Object.fromEntries(Object.entries(paid(2).data).reverse()) };
    const second = await t.api('/events/batch', {
      method: 'POST',
      json: {
        events: [
          { ...reordered, idempotencyKey: 'pay-2' },
          { ...paid(4), idempotencyKey: 'pay-4' },
        ],
      },
    });
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    const secondData = ((await second.json()) as { data: Entry[] }).data;
    expect(secondData[0]).toEqual(firstData[1]);
    expect(secondData[1].id).not.toBe(firstData[1].id);

    // Every event a repeat: 200 and Idempotent-Replayed, as for a single publish.
    const replay = await t.api('/events/batch', {
      method: 'POST',
      json: {
        events: [
          { ...paid(4), idempotencyKey: 'pay-4' },
          { ...paid(1), idempotencyKey: 'pay-1' },
        ],
      },
    });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as { data: Entry[] }).data).toEqual([secondData[1], firstData[0]]);

    // Concurrent batches sharing keys, in opposite orders, race to one event per key.
    const racing = await Promise.all(
      Array.from({ length: 6 }, (_, i) => {
        const pair = [
          { ...paid(5), idempotencyKey: 'pay-5' },
          { ...paid(6), idempotencyKey: 'pay-6' },
        ];
        return t.api('/events/batch', { method: 'POST', json: { events: i % 2 ? pair.reverse() : pair } });
      }),
    );
    expect(racing.map((r) => r.status).every((status) => status === 200 || status === 202)).toBe(true);
    const raced = await Promise.all(racing.map(async (r) => ((await r.json()) as { data: Entry[] }).data.map((e) => e.id).sort()));
    expect(new Set(raced.map((ids) => ids.join())).size).toBe(1);

    await receiver.waitFor(6, (r) => r.path === '/batch/idem');
    await eventually(
      () => t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key LIKE 'pay-%'`),
      ([row]) => row.n === 5,
    );
    // Six events in all (pay-1, pay-2, the keyless one, pay-4, pay-5, pay-6), each delivered once.
    expect(idsAt(receiver, '/batch/idem').sort()).toEqual([...firstData.map((e) => e.id), secondData[1].id, ...raced[0]].sort());
  });

  it('refuses a batch reusing a key for other data with 422 naming the event and the first one, publishing none of it', async () => {
    await createWebhook(t, `${receiver.url}/batch/reuse`, ['payment.received']);
    const data = { ...payment, orderId: 'ord_reuse' };
    const first = await t.api('/events/batch', {
      method: 'POST',
      json: { events: [{ type: 'payment.received', data, idempotencyKey: 'reuse-1' }] },
    });
    const [{ id }] = ((await first.json()) as { data: Entry[] }).data;
    await receiver.waitFor(1, (r) => r.path === '/batch/reuse');
    const before = await counts(t);

    const reused = await t.api('/events/batch', {
      method: 'POST',
      json: {
        events: [
          { type: 'payment.received', data: { ...data, orderId: 'ord_new' }, idempotencyKey: 'reuse-2' },
          { type: 'payment.received', data: { ...data, amount: data.amount + 1 }, idempotencyKey: 'reuse-1' },
        ],
      },
    });
    expect(reused.status).toBe(422);
    expect(await reused.json()).toEqual({
      statusCode: 422,
      error: 'Unprocessable Entity',
      message:
        `events[1].idempotencyKey "reuse-1" was already used for event ${id} with a different type or data; ` +
        'use a new key for a new event (nothing of the batch was published)',
    });
    expect(await counts(t)).toEqual(before);
    // reuse-2 was not taken by the refused batch.
    const again = await t.api('/events/batch', {
      method: 'POST',
      json: { events: [{ type: 'payment.received', data: { ...data, orderId: 'ord_new' }, idempotencyKey: 'reuse-2' }] },
    });
    expect(again.status).toBe(202);
    await receiver.waitFor(2, (r) => r.path === '/batch/reuse');
  });

  it('refuses an Idempotency-Key header with 400 pointing at the per-event idempotencyKey, publishing nothing', async () => {
    const before = await counts(t);
    for (const key of ['batch-1', '']) {
      const res = await t.api('/events/batch', {
        method: 'POST',
        headers: { 'Idempotency-Key': key },
        json: { events: [{ type: 'payment.received', data: { ...payment, orderId: 'ord_header' } }] },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: ['The Idempotency-Key header is not read by POST /events/batch: give each event its own key in events[].idempotencyKey'],
      });
    }
    expect(await counts(t)).toEqual(before);
  });

  it('publishMany joins the caller’s transaction: a rollback publishes nothing, a commit delivers every event', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/batch/outbox`, ['customer.updated']);
    const publisher = t.app.get(EventPublisher);
    const dataSource = t.app.get(DataSource);
    const updated = (n: number) => ({
      type: 'customer.updated' as const,
      data: { id: `cus_${n}`, email: `c${n}@example.com`, firstName: 'C', lastName: `${n}` },
    });
    const before = await counts(t);

    await expect(
      dataSource.transaction(async (manager) => {
        const published = await publisher.publishMany('st_default', [updated(1), updated(2)], { manager });
        expect(published.map((event) => event.deliveries)).toEqual([1, 1]);
        throw new Error('the orders could not be cancelled after all');
      }),
    ).rejects.toThrow('could not be cancelled');
    // With keys too (its own savepoint inside the caller's transaction).
    await expect(
      dataSource.transaction(async (manager) => {
        await publisher.publishMany('st_default', [{ ...updated(3), idempotencyKey: 'outbox-3' }], { manager });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await counts(t)).toEqual(before);

    const committed = await dataSource.transaction((manager) =>
      publisher.publishMany('st_default', [updated(4), { ...updated(5), idempotencyKey: 'outbox-3' }], { manager }),
    );
    await receiver.waitFor(2, (r) => r.path === '/batch/outbox');
    expect(idsAt(receiver, '/batch/outbox').sort()).toEqual(committed.map((event) => event.id).sort());
    await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === 'succeeded'),
    );
  });

  it('publishMany: a refused key undoes only the batch, and the caller’s transaction can still commit', async () => {
    const publisher = t.app.get(EventPublisher);
    const dataSource = t.app.get(DataSource);
    const [first] = await publisher.publishMany('st_default', [{ type: 'payment.received', data: payment, idempotencyKey: 'tx-1' }]);
    const before = await counts(t);

    const outcome = await dataSource.transaction(async (manager) => {
      const error: unknown = await publisher
        .publishMany(
          'st_default',
          [
            { type: 'payment.received', data: { ...payment, orderId: 'ord_tx_2' }, idempotencyKey: 'tx-2' },
            { type: 'payment.received', data: { ...payment, amount: 1 }, idempotencyKey: 'tx-1' },
          ],
          { manager },
        )
        .catch((caught: unknown) => caught);
      // The caller's own work in the same transaction goes on and commits.
      const [row] = await manager.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM events`);
      return { error, events: row.n };
    });
    expect(outcome.error).toBeInstanceOf(EventError);
    expect(outcome.error).toMatchObject({ code: EventErrorCode.IdempotencyKeyReused, message: expect.stringContaining(`events[1]`) });
    expect((outcome.error as EventError).message).toContain(first.id);
    expect(outcome.events).toBe(before[0]);
    expect(await counts(t)).toEqual(before);
  });

  it('publishMany throws EventErrors by class and code: an invalid batch names each event, an unknown store', async () => {
    const publisher = t.app.get(EventPublisher);
    const invalid: unknown = await publisher
      .publishMany('st_default', [
        { type: 'order.created', data: orderData() },
        { type: 'order.created', data: { id: 'ord_1' } as never },
      ])
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(EventError);
    expect(invalid).toMatchObject({ code: EventErrorCode.InvalidBatch });
    expect((invalid as EventError).problems).toContain('events[1].data.orderNumber is required');
    await expect(publisher.publishMany('st_nope', [{ type: 'order.created', data: orderData() }])).rejects.toMatchObject({
      constructor: EventError,
      code: EventErrorCode.StoreNotFound,
    });
    await expect(
      publisher.publishMany('st_nope', [{ type: 'order.created', data: orderData(), idempotencyKey: 'k' }]),
    ).rejects.toMatchObject({ code: EventErrorCode.StoreNotFound });
  });
});
