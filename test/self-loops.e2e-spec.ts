import { URL_RESOLVER } from '../src/webhooks/url-policy';
import { ADMIN_KEY, startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { expectError, expectJson, fakeResolver, rowCounts } from './support/expectations';
import { createWebhook, deliveriesOf, delivery, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

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
