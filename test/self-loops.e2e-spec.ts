import { URL_RESOLVER } from '../src/webhooks/url-policy';
import { ADMIN_KEY, startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { expectError, expectJson, fakeResolver, rowCounts } from './support/expectations';
import { createWebhook, deliveriesOf, delivery, orderData, publish } from './support/fixtures';
import { ReceivedRequest, Receiver } from './support/receiver';

/**
 * No delivery loops through Hookline itself. The loop of the report: two endpoints whose URLs are
 * each other's `POST /deliveries/:id/retry` on Hookline's own API, with the store's key as a
 * custom X-API-Key header, each successful attempt restarting the other delivery, for ever. Three
 * locks, each shown apart: such URLs are refused (PUBLIC_URL's origin, the address and port
 * Hookline listens on); a request carrying a delivery's own headers is refused, so a relay that
 * forwards deliveries to the API cannot close the loop either; and a relay that strips those
 * headers loops only until each delivery has had MAX_ATTEMPTS_PER_DELIVERY attempts.
 */

const PUBLIC_URL = 'https://hooks.platform.example';

/** The headers of a delivery, as Hookline sends them (SIGNATURE_HEADERS=seed,standard). */
const DELIVERY_HEADER = /^(x-)?webhook-/;

/**
 * A relay elsewhere (another host, say) that passes each request it receives on to the URL set
 * for its path, headers and body, and answers with what it got back: a way around the URL rules.
 * `strip` drops the delivery's own headers on the way. A path with no route answers 200.
 */
async function startRelay(strip: boolean): Promise<{ receiver: Receiver; routes: Map<string, string> }> {
  const receiver = await Receiver.start();
  const routes = new Map<string, string>();
  receiver.respondWith(async (request: ReceivedRequest, res) => {
    const target = routes.get(request.path);
    if (!target) return res.writeHead(200).end();
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (['host', 'content-length', 'connection'].includes(name) || (strip && DELIVERY_HEADER.test(name))) continue;
      headers.set(name, String(value));
    }
    const answer = await fetch(target, { method: 'POST', headers, body: request.body });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
  });
  return { receiver, routes };
}

/** Two endpoints of one store at the relay's /a and /b, each with the store's key as a custom header, and a delivery to each. */
async function loopPair(t: TestApp, relay: Receiver): Promise<{ a: string; b: string; deliveryA: string; deliveryB: string }> {
  const extra = { headers: { 'X-API-Key': ADMIN_KEY } };
  const a = await createWebhook(t, `${relay.url}/a`, ['order.updated'], extra);
  const b = await createWebhook(t, `${relay.url}/b`, ['order.updated'], extra);
  await publish(t, 'order.updated', orderData(7));
  const [deliveryA] = await eventually(
    () => deliveriesOf(t, a.id),
    (rows) => rows[0]?.status === 'succeeded',
  );
  const [deliveryB] = await eventually(
    () => deliveriesOf(t, b.id),
    (rows) => rows[0]?.status === 'succeeded',
  );
  return { a: a.id, b: b.id, deliveryA: deliveryA.id, deliveryB: deliveryB.id };
}

function retryUrl(t: TestApp, deliveryId: string): string {
  return `${t.baseUrl}/api/v1/external/deliveries/${deliveryId}/retry`;
}

describe('endpoint URLs that lead to Hookline itself', () => {
  let t: TestApp;
  let port: number;
  let receiver: Receiver;
  const answers: Record<string, string[]> = { localhost: ['127.0.0.1', '::1'], 'loop.example.com': ['127.0.0.1'] };

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({
      env: { PUBLIC_URL, RETRY_SCHEDULE_MS: '0' },
      overrides: [{ provide: URL_RESOLVER, useValue: fakeResolver(answers) }],
    });
    port = Number(new URL(t.baseUrl).port);
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  async function expectRefused(url: string, message: RegExp): Promise<void> {
    const before = await rowCounts(t.db);
    await expectError(await t.api('/webhooks', { method: 'POST', json: { name: 'loop', url, events: ['order.created'] } }), 400, message);
    expect(await rowCounts(t.db)).toEqual(before);
  }

  it('refuses the origin of PUBLIC_URL, whatever the path, on create and on update, and stores nothing', async () => {
    const ownApi = /^url must not point at Hookline itself: https:\/\/hooks\.platform\.example is its own API \(PUBLIC_URL\)$/;
    for (const url of [
      `${PUBLIC_URL}/api/v1/external/deliveries/del_01jz0000000000000000000000/retry`,
      'https://HOOKS.platform.example:443/anything',
      'https://hooks.platform.example./',
      'http://hooks.platform.example/api/v1/external/events',
    ]) {
      await expectRefused(url, ownApi);
    }

    const hook = await createWebhook(t, `${receiver.url}/kept`);
    const before = await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id]);
    await expectError(
      await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { url: `${PUBLIC_URL}/api/v1/external/events` } }),
      400,
      ownApi,
    );
    expect(await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id])).toEqual(before);

    // Another port, or another host of the same domain, is someone else's.
    for (const url of ['https://hooks.platform.example:8443/in', 'https://shop.platform.example/in']) {
      const created = await createWebhook(t, url);
      await t.api(`/webhooks/${created.id}`, { method: 'DELETE' });
    }
  });

  it('refuses the address and port it listens on, through any local address or a name that resolves to one', async () => {
    const listening = /^url must not point at Hookline itself: /;
    for (const url of [
      `${t.baseUrl}/api/v1/external/deliveries/del_01jz0000000000000000000000/retry`,
      `http://127.0.0.2:${port}/api/v1/external/events`,
      `http://2130706433:${port}/`,
      `http://[::1]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://0.0.0.0:${port}/`,
      `http://localhost:${port}/`,
      `http://loop.example.com:${port}/api/v1/external/events`,
    ]) {
      await expectRefused(url, listening);
    }
    const body = await expectError(
      await t.api('/webhooks', {
        method: 'POST',
        json: { name: 'loop', url: `http://loop.example.com:${port}/`, events: ['order.created'] },
      }),
      400,
    );
    expect(body.message).toEqual([
      `url must not point at Hookline itself: loop.example.com resolves to 127.0.0.1, where it listens on port ${port}`,
    ]);
  });

  it("refuses the report's loop: endpoints pointing at each other's retry with the store key as a header", async () => {
    const a = await createWebhook(t, `${receiver.url}/a`, ['order.updated']);
    const b = await createWebhook(t, `${receiver.url}/b`, ['order.updated']);
    await publish(t, 'order.updated', orderData(1));
    const [deliveryA] = await eventually(
      () => deliveriesOf(t, a.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    const [deliveryB] = await eventually(
      () => deliveriesOf(t, b.id),
      (rows) => rows[0]?.status === 'succeeded',
    );

    for (const [hook, other] of [
      [a, deliveryB],
      [b, deliveryA],
    ] as const) {
      const url = `${t.baseUrl}/api/v1/external/deliveries/${other.id}/retry`;
      await expectError(
        await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { url, headers: { 'X-API-Key': ADMIN_KEY } } }),
        400,
        /^url must not point at Hookline itself: it listens on 127\.0\.0\.1:\d+$/,
      );
      expect((await expectJson<{ url: string }>(await t.api(`/webhooks/${hook.id}`), 200)).url).toBe(hook.url);
    }
  });

  it('checks again when it delivers: a name that leads to Hookline only later gets no request', async () => {
    answers['later.example.com'] = ['192.0.2.10'];
    const hook = await createWebhook(t, `http://later.example.com:${port}/api/v1/external/events`, ['order.cancelled']);
    answers['later.example.com'] = ['127.0.0.1'];
    await publish(t, 'order.cancelled', orderData(2));
    const [row] = await eventually(
      () => deliveriesOf(t, hook.id),
      (rows) => rows[0]?.status === 'failed',
      { what: 'the delivery to fail' },
    );
    const detail = await delivery(t, row.id);
    // Closed before a byte was sent: not an HTTP answer of Hookline's API.
    expect(detail.attempts).toEqual([expect.objectContaining({ statusCode: null, responseBody: null })]);
    expect(detail.lastError).toBe(
      `blocked: refusing to deliver to later.example.com: it is Hookline itself (it reached 127.0.0.1:${port}, where Hookline listens)`,
    );
  });
});

describe("requests that carry a delivery's headers", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0' } });
  });

  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['webhook-id', 'webhook-signature'],
    ['X-Webhook-ID', 'X-Webhook-Signature'],
    ['webhook-id', 'X-Webhook-Signature'],
  ])('are refused with 400 when they carry %s and %s, before the key is even checked, changing nothing', async (id, signature) => {
    const before = await rowCounts(t.db);
    const headers = { [id]: 'evt_01jz0000000000000000000000', [signature]: 'v1,c2lnbmF0dXJl' };
    const named = `The request carries a webhook delivery's headers (${id.toLowerCase()}, ${signature.toLowerCase()}): Hookline's API does not accept its own deliveries, so an endpoint cannot call it`;
    await expectError(await t.api('/events', { method: 'POST', json: { type: 'order.created', data: orderData(1) }, headers }), 400, named);
    await expectError(await t.api('/deliveries/del_01jz0000000000000000000000/retry', { method: 'POST', headers }), 400, named);
    await expectError(await t.api('/webhooks', { headers, key: null }), 400, named);
    expect(await rowCounts(t.db)).toEqual(before);
  });

  it('lets a request with only one of them through', async () => {
    await publish(t, 'order.created', orderData(2), { 'webhook-id': 'my-own-id' });
    await publish(t, 'order.created', orderData(3), { 'X-Webhook-Signature': 'sha256=00' });
  });

  it("so a relay that forwards the report's loop to the API cannot close it", async () => {
    const { receiver: relay, routes } = await startRelay(false);
    try {
      const { a, deliveryA, deliveryB } = await loopPair(t, relay);
      routes.set('/a', retryUrl(t, deliveryB));
      routes.set('/b', retryUrl(t, deliveryA));
      await expectJson(await t.api(`/deliveries/${deliveryA}/retry`, { method: 'POST' }), 202);

      const [ended] = await eventually(
        () => deliveriesOf(t, a),
        (rows) => rows[0]?.status === 'failed',
        { what: 'the retry to fail' },
      );
      const detail = await delivery(t, ended.id);
      expect(detail.attempts?.[1]).toMatchObject({
        statusCode: 400,
        responseBody: expect.stringContaining("a webhook delivery's headers"),
      });
      // The other delivery was never restarted: one attempt, its first.
      expect(await delivery(t, deliveryB)).toMatchObject({ status: 'succeeded', attemptCount: 1 });
      expect(relay.to('/b')).toHaveLength(1);
    } finally {
      await relay.close();
    }
  });
});

describe('a delivery has at most MAX_ATTEMPTS_PER_DELIVERY attempts over its whole life', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    receiver.respondStatus(500);
    t = await startApp({ env: { MAX_ATTEMPTS_PER_DELIVERY: '5', RETRY_SCHEDULE_MS: '0,150ms,150ms' } });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('ends a manual retry’s cycle at the limit, and answers a retry past it with 409', async () => {
    const hook = await createWebhook(t, `${receiver.url}/down`);
    await publish(t, 'order.created', orderData(1));
    const [first] = await eventually(
      () => deliveriesOf(t, hook.id),
      (rows) => rows[0]?.status === 'failed',
      { what: 'the first cycle' },
    );
    expect(first.attemptCount).toBe(3);

    await expectJson(await t.api(`/deliveries/${first.id}/retry`, { method: 'POST' }), 202);
    const ended = await eventually(
      () => delivery(t, first.id),
      (row) => row.status === 'failed',
      { what: 'the second cycle' },
    );
    // Two attempts of a cycle of three: the fifth of the delivery's life was its last.
    expect(ended.attempts?.map((attempt) => attempt.number)).toEqual([1, 2, 3, 4, 5]);
    expect(ended.lastError).toBe(
      'HTTP 500; no more attempts: a delivery is attempted at most 5 times (MAX_ATTEMPTS_PER_DELIVERY), manual retries included',
    );
    expect(receiver.to('/down')).toHaveLength(5);

    await expectError(
      await t.api(`/deliveries/${first.id}/retry`, { method: 'POST' }),
      409,
      `Delivery ${first.id} has had 5 attempts, the most a delivery may have (MAX_ATTEMPTS_PER_DELIVERY); it cannot be retried again`,
    );
    expect(await expectJson(await t.api(`/webhooks/${hook.id}/deliveries/retry-failed`, { method: 'POST', json: {} }), 202)).toEqual({
      queued: 0,
    });
    expect(await delivery(t, first.id)).toMatchObject({ status: 'failed', attemptCount: 5 });
    expect(receiver.to('/down')).toHaveLength(5);
  });

  it("ends the report's loop through a relay that strips the delivery's headers", async () => {
    const { receiver: relay, routes } = await startRelay(true);
    try {
      const { deliveryA, deliveryB } = await loopPair(t, relay);
      routes.set('/a', retryUrl(t, deliveryB));
      routes.set('/b', retryUrl(t, deliveryA));
      await expectJson(await t.api(`/deliveries/${deliveryA}/retry`, { method: 'POST' }), 202);

      // While the loop runs, one of the two is always pending: each restarts the other before it ends.
      const [a, b] = await eventually(
        () => Promise.all([delivery(t, deliveryA), delivery(t, deliveryB)]),
        (pair) => pair.every((row) => row.status !== 'pending'),
        { deadlineMs: 20_000, what: 'the loop to end' },
      );
      expect(Math.max(a.attemptCount, b.attemptCount)).toBe(5);
      expect(a.attemptCount).toBeLessThanOrEqual(5);
      expect(b.attemptCount).toBeLessThanOrEqual(5);
      // It did loop (each restarted the other more than once), and every request the relay got is an attempt on record.
      expect(a.attemptCount + b.attemptCount).toBeGreaterThan(4);
      expect(relay.to('/a')).toHaveLength(a.attemptCount);
      expect(relay.to('/b')).toHaveLength(b.attemptCount);
      for (const ended of [a, b].filter((row) => row.attemptCount === 5)) {
        await expectError(await t.api(`/deliveries/${ended.id}/retry`, { method: 'POST' }), 409);
      }
    } finally {
      await relay.close();
    }
  });
});
