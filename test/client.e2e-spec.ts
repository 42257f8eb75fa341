import { join } from 'node:path';
import {
  createHooklineClient,
  HooklineApiError,
  type HooklineClient,
  unwrap,
  verifyWebhook,
  WebhookVerificationError,
} from '@hookline/client';
import { ADMIN_KEY, startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { orderData } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * @hookline/client as an integrator uses it: the built package, loaded by its name, against the
 * real application and a real receiver on loopback.
 */
describe('@hookline/client against the application', () => {
  let t: TestApp;
  let receiver: Receiver;
  let admin: HooklineClient;
  /** Whether /flaky answers 500 (otherwise 200). */
  let flakyFails = true;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,100' } });
    receiver = await Receiver.start();
    receiver.respondWith((request, res) => {
      const failing = request.path === '/flaky' && flakyFails;
      res.writeHead(failing ? 500 : 200, { 'content-type': 'application/json' });
      res.end(failing ? '{"error":"down"}' : '{"received":true}');
    });
    admin = createHooklineClient({ baseUrl: t.baseUrl, apiKey: ADMIN_KEY });
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  /** A client with a key of its own, as an integrator gets it from the store's administrator. */
  async function integrator(): Promise<HooklineClient> {
    const created = await unwrap(
      admin.POST('/api-keys', { body: { name: 'integration', scopes: ['webhooks:read', 'webhooks:write', 'events:write'] } }),
    );
    return createHooklineClient({ baseUrl: t.baseUrl, apiKey: created.key });
  }

  it('is the built package, resolved by its name through the workspace', () => {
    expect(require.resolve('@hookline/client')).toBe(join(__dirname, '..', 'packages', 'client', 'dist', 'index.js'));
  });

  it('creates an API key and calls the API with it', async () => {
    const { data, error, response } = await admin.POST('/api-keys', { body: { name: 'ci', scopes: ['webhooks:read'] } });
    expect(error).toBeUndefined();
    expect(response.status).toBe(201);
    expect(data!.key).toEqual(expect.any(String));

    const client = createHooklineClient({ baseUrl: `${t.baseUrl}/`, apiKey: data!.key });
    const me = await unwrap(client.GET('/me'));
    expect(me).toMatchObject({ id: data!.id, storeId: 'st_default', scopes: ['webhooks:read'] });
  });

  it('registers an endpoint, publishes, reads the attempts, and the delivery verifies', async () => {
    const client = await integrator();
    const endpoint = await unwrap(
      client.POST('/webhooks', { body: { name: 'orders', url: `${receiver.url}/orders`, events: ['order.created'] } }),
    );
    expect(endpoint.secret).toMatch(/^whsec_/);

    const published = await unwrap(client.POST('/events', { body: { type: 'order.created', data: orderData(1) } }));
    expect(published).toMatchObject({ type: 'order.created', deliveries: 1 });

    const [received] = await receiver.waitFor(1, (request) => request.path === '/orders');
    const envelope = verifyWebhook(endpoint.secret, received.headers, received.body);
    expect(envelope).toMatchObject({ id: published.id, type: 'order.created', data: orderData(1) });
    expect(() => verifyWebhook(endpoint.secret, received.headers, Buffer.concat([received.body, Buffer.from(' ')]))).toThrow(
      WebhookVerificationError,
    );

    const page = await eventually(
      () => unwrap(client.GET('/webhooks/{id}/deliveries', { params: { path: { id: endpoint.id }, query: { status: 'succeeded' } } })),
      (list) => list.data.length === 1,
      { what: 'a succeeded delivery' },
    );
    const detail = await unwrap(client.GET('/deliveries/{id}', { params: { path: { id: page.data[0].id } } }));
    expect(detail.event.id).toBe(published.id);
    expect(detail.attempts).toEqual([expect.objectContaining({ number: 1, statusCode: 200, trigger: 'scheduled', error: null })]);
  });

  it('retries a failed delivery', async () => {
    const client = await integrator();
    const endpoint = await unwrap(
      client.POST('/webhooks', { body: { name: 'flaky', url: `${receiver.url}/flaky`, events: ['order.created'] } }),
    );
    const published = await unwrap(client.POST('/events', { body: { type: 'order.created', data: orderData(2) } }));

    const [failed] = await eventually(
      async () => (await unwrap(client.GET('/webhooks/{id}/deliveries', { params: { path: { id: endpoint.id } } }))).data,
      (list) => list.length === 1 && list[0].status === 'failed',
      { what: 'the delivery to fail after its 2 attempts' },
    );
    expect(failed).toMatchObject({ eventId: published.id, attemptCount: 2, lastStatusCode: 500 });

    flakyFails = false;
    const retried = await unwrap(client.POST('/deliveries/{id}/retry', { params: { path: { id: failed.id } } }));
    expect(retried).toMatchObject({ id: failed.id, status: 'pending' });

    const detail = await eventually(
      () => unwrap(client.GET('/deliveries/{id}', { params: { path: { id: failed.id } } })),
      (d) => d.status === 'succeeded',
      { what: 'the retried delivery to succeed' },
    );
    expect(detail.attempts.map((a) => [a.trigger, a.statusCode])).toEqual([
      ['scheduled', 500],
      ['scheduled', 500],
      ['manual', 200],
    ]);
    expect(receiver.to('/flaky').map((r) => r.headers['webhook-id'])).toEqual([published.id, published.id, published.id]);
  });

  it('answers a bad request with a typed error naming the field, and changes nothing', async () => {
    const client = await integrator();
    const { data, error, response } = await client.POST('/webhooks', {
      body: { name: 'broken', url: 'not a url', events: ['order.created'] },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(JSON.stringify(error!.message)).toContain('url');

    const thrown = await unwrap(
      // @ts-expect-error an event type the catalogue does not have is a compile error, and a 400
      client.POST('/webhooks', { body: { name: 'broken', url: `${receiver.url}/x`, events: ['order.shipped'] } }),
    ).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(HooklineApiError);
    expect(thrown).toMatchObject({ status: 400, body: { statusCode: 400 } });
    expect((thrown as HooklineApiError).messages.join(' ')).toContain('events');

    const list = await unwrap(client.GET('/webhooks'));
    expect(list.data.map((w) => w.name)).not.toContain('broken');
  });
});
