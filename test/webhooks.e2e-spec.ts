import { createHmac } from 'node:crypto';
import { URL_RESOLVER } from '../src/webhooks/url-policy';
import { startApp, TestApp } from './support/app';
import {
  allPages,
  createStoreWithKey,
  createWebhook,
  expectError,
  expectJson,
  fakeResolver,
  idOf,
  ISO_MS,
  rowCounts,
  rowsContaining,
  SECRET,
  WebhookBody,
} from './support/expectations';
import { Receiver } from './support/receiver';

const WEBHOOK_KEYS = [
  'auth',
  'createdAt',
  'disabledAt',
  'disabledReason',
  'events',
  'filter',
  'headers',
  'id',
  'isActive',
  'name',
  'ordered',
  'rateLimitPerSecond',
  'retrySchedule',
  'secretRotation',
  'sensitiveHeaders',
  'tls',
  'updatedAt',
  'url',
];
const WITH_SECRET_KEYS = [...WEBHOOK_KEYS, 'secret'].sort();
const RATE_LIMIT_RULE = 'rateLimitPerSecond must be a whole number from 1 to 10000, or null';

/** The 18 store event types in their 6 categories, then Hookline's 2 operational ones. */
const CATALOGUE: Record<string, string[]> = {
  Orders: ['order.created', 'order.updated', 'order.cancelled', 'order.completed', 'order.status_changed'],
  Payments: ['payment.received', 'payment.refunded'],
  Products: ['product.created', 'product.updated', 'product.deleted'],
  Inventory: ['stock.low', 'stock.updated'],
  Customers: ['customer.created', 'customer.updated'],
  Deliveries: ['delivery.batch_started', 'delivery.batch_completed', 'delivery.completed', 'delivery.failed'],
  Webhooks: ['webhook.disabled', 'webhook.delivery_failed'],
};

type WebhookRow = Record<string, unknown>;

function webhookRow(t: TestApp, id: string): Promise<WebhookRow | undefined> {
  return t.db.query<WebhookRow>('SELECT * FROM webhooks WHERE id = $1', [id]).then((rows) => rows[0]);
}

describe('webhook endpoints (ALLOW_HTTP_URLS and ALLOW_PRIVATE_NETWORKS at their development default, true)', () => {
  let t: TestApp;
  let receiver: Receiver;
  const resolver = fakeResolver({ 'hooks.example.com': ['93.184.215.14'], 'other.example.com': ['2606:4700:4700::1111'] });

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({ overrides: [{ provide: URL_RESOLVER, useValue: resolver }] });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  describe('POST /webhooks', () => {
    it('registers an endpoint and shows its signing secret once, in the create response', async () => {
      const res = await t.api('/webhooks', {
        method: 'POST',
        json: { name: 'ERP order sync', url: 'https://hooks.example.com/in?store=1', events: ['order.created', 'payment.received'] },
      });
      const body = await expectJson<WebhookBody>(res, 201);
      expect(Object.keys(body).sort()).toEqual(WITH_SECRET_KEYS);
      expect(body).toEqual({
        id: expect.stringMatching(idOf('wh')),
        name: 'ERP order sync',
        url: 'https://hooks.example.com/in?store=1',
        events: ['order.created', 'payment.received'],
        filter: null,
        isActive: true,
        headers: {},
        sensitiveHeaders: [],
        retrySchedule: null,
        rateLimitPerSecond: null,
        ordered: false,
        auth: null,
        tls: null,
        disabledReason: null,
        disabledAt: null,
        secretRotation: null,
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: body.createdAt,
        secret: expect.stringMatching(SECRET),
      });
      expect(Math.abs(Date.parse(body.createdAt) - Date.now())).toBeLessThan(60_000);

      const row = await webhookRow(t, body.id);
      expect(row).toMatchObject({
        store_id: 'st_default',
        name: 'ERP order sync',
        url: 'https://hooks.example.com/in?store=1',
        events: ['order.created', 'payment.received'],
        is_active: true,
      });
      // Stored encrypted: neither the secret nor its random part appears anywhere in the database.
      expect(await rowsContaining(t.db, body.secret!)).toBe(0);
      expect(await rowsContaining(t.db, body.secret!.slice('whsec_'.length))).toBe(0);
    });

    it('gives every endpoint its own secret', async () => {
      const a = await createWebhook(t, {});
      const b = await createWebhook(t, {});
      expect(a.id).not.toBe(b.id);
      expect(a.secret).not.toBe(b.secret);
    });

    it('registers an inactive endpoint when isActive is false', async () => {
      const body = await createWebhook(t, { isActive: false });
      expect(body.isActive).toBe(false);
      expect(await webhookRow(t, body.id)).toMatchObject({ is_active: false });
    });

    it('accepts http:// where ALLOW_HTTP_URLS allows it, and loopback where ALLOW_PRIVATE_NETWORKS allows it', async () => {
      const body = await createWebhook(t, { url: `${receiver.url}/hook` });
      expect(body.url).toBe(`${receiver.url}/hook`);
    });

    it('accepts a name of exactly 200 characters and a URL of exactly 2048', async () => {
      const name = 'n'.repeat(200);
      const base = 'https://hooks.example.com/';
      const url = base + 'p'.repeat(2048 - base.length);
      const body = await createWebhook(t, { name, url });
      expect(body).toMatchObject({ name, url });
    });

    it('accepts every catalogue type at once', async () => {
      const all = Object.values(CATALOGUE).flat();
      expect((await createWebhook(t, { events: all })).events).toEqual(all);
    });

    const long = 'https://hooks.example.com/' + 'p'.repeat(2048 - 'https://hooks.example.com/'.length + 1);
    it.each<[string, Record<string, unknown>, string]>([
      ['name missing', { name: undefined }, 'name is required'],
      ['name empty', { name: '' }, 'name must be 1 to 200 characters'],
      ['name of 201 characters', { name: 'n'.repeat(201) }, 'name must be 1 to 200 characters'],
      ['name a number', { name: 42 }, 'name must be a string'],
      ['name null', { name: null }, 'name must be a string'],
      ['url missing', { url: undefined }, 'url is required'],
      ['url a number', { url: 42 }, 'url must be a string'],
      ['url relative', { url: '/hooks/in' }, 'url must be an absolute URL'],
      ['url without scheme', { url: 'hooks.example.com/in' }, 'url must be an absolute URL'],
      ['url not a URL at all', { url: 'not a url' }, 'url must be an absolute URL'],
      ['url with an ftp scheme', { url: 'ftp://hooks.example.com/in' }, 'url must use https:// or http://'],
      ['url with a javascript scheme', { url: 'javascript:alert(1)' }, 'url must use https:// or http://'],
      ['url with user:password', { url: 'https://user:pass@hooks.example.com/in' }, 'url must not contain a username or password'],
      ['url with a user only', { url: 'https://user@hooks.example.com/in' }, 'url must not contain a username or password'],
      ['url of 2049 characters', { url: long }, 'url must be at most 2048 characters'],
      ['events missing', { events: undefined }, 'events is required'],
      ['events a string', { events: 'order.created' }, 'events must be an array of event types'],
      ['events empty', { events: [] }, 'events must contain at least one event type'],
      ['events with a duplicate', { events: ['order.created', 'order.created'] }, 'events must not contain duplicates'],
      [
        'events with an unknown type',
        { events: ['order.created', 'order.shipped'] },
        'events contains an unknown event type: "order.shipped"; see GET /event-types',
      ],
      [
        'events with webhook.test (not subscribable)',
        { events: ['webhook.test'] },
        'events contains an unknown event type: "webhook.test"; see GET /event-types',
      ],
      ['events with a number', { events: [42] }, 'events contains an unknown event type: 42; see GET /event-types'],
      ['isActive a string', { isActive: 'yes' }, 'isActive must be a boolean'],
      ['isActive a number', { isActive: 1 }, 'isActive must be a boolean'],
      ['isActive null', { isActive: null }, 'isActive must be a boolean'],
      ['an unknown field', { colour: 'blue' }, 'property colour should not exist'],
      ['a secret of its own', { secret: 'whsec_mine' }, 'property secret should not exist'],
      ['an id of its own', { id: 'wh_mine' }, 'property id should not exist'],
      ['a store of its own', { storeId: 'st_other' }, 'property storeId should not exist'],
    ])('refuses %s with 400 and stores nothing', async (_case, override, message) => {
      const before = await rowCounts(t.db);
      const json = { name: 'endpoint', url: 'https://hooks.example.com/in', events: ['order.created'], ...override };
      await expectError(await t.api('/webhooks', { method: 'POST', json }), 400, message);
      expect(await rowCounts(t.db)).toEqual(before);
    });

    it('accepts a host that does not resolve (yet) while private networks are allowed: there is no address to refuse', async () => {
      const res = await t.api('/webhooks', {
        method: 'POST',
        json: { name: 'later', url: 'https://nowhere.invalid/in', events: ['order.created'] },
      });
      expect(res.status).toBe(201);
      await t.api(`/webhooks/${((await res.json()) as { id: string }).id}`, { method: 'DELETE' });
    });

    it('names every problem of a body at once', async () => {
      const body = await expectError(
        await t.api('/webhooks', { method: 'POST', json: { name: '', url: 7, events: [], extra: true } }),
        400,
      );
      expect(body.message).toEqual(
        expect.arrayContaining([
          'property extra should not exist',
          'name must be 1 to 200 characters',
          'url must be a string',
          'events must contain at least one event type',
        ]),
      );
    });

    it.each<[string, string, string]>([
      ['malformed JSON', '{"name": "a", ', 'application/json'],
      ['a JSON null', 'null', 'application/json'],
      ['a JSON string', '"order.created"', 'application/json'],
    ])('refuses %s with 400 "Malformed JSON in request body" and stores nothing', async (_case, body, contentType) => {
      const before = await rowCounts(t.db);
      await expectError(
        await t.api('/webhooks', { method: 'POST', body, headers: { 'Content-Type': contentType } }),
        400,
        'Malformed JSON in request body',
      );
      expect(await rowCounts(t.db)).toEqual(before);
    });

    it.each<[string, string, string]>([
      ['a JSON array', '[{"name":"a","url":"https://hooks.example.com/in","events":["order.created"]}]', 'application/json'],
      ['no body', '', 'application/json'],
    ])('refuses %s with 400 and stores nothing', async (_case, body, contentType) => {
      const before = await rowCounts(t.db);
      await expectError(await t.api('/webhooks', { method: 'POST', body, headers: { 'Content-Type': contentType } }), 400);
      expect(await rowCounts(t.db)).toEqual(before);
    });
  });

  describe('GET /webhooks/:id and the secret', () => {
    it('returns the resource without its secret', async () => {
      const created = await createWebhook(t, { name: 'get me', events: ['stock.low'] });
      const res = await t.api(`/webhooks/${created.id}`);
      const text = await res.clone().text();
      const body = await expectJson<WebhookBody>(res, 200);
      const { secret, ...resource } = created;
      expect(Object.keys(body).sort()).toEqual(WEBHOOK_KEYS);
      expect(body).toEqual(resource);
      expect(text).not.toContain(secret!);
    });

    it('never lists a secret', async () => {
      const created = await createWebhook(t, {});
      const res = await t.api('/webhooks?limit=200');
      const text = await res.clone().text();
      const page = await expectJson<{ data: WebhookBody[] }>(res, 200);
      expect(text).not.toContain(created.secret!);
      expect(text).not.toContain('whsec_');
      for (const item of page.data) expect(Object.keys(item).sort()).toEqual(WEBHOOK_KEYS);
      const { secret: _secret, ...resource } = created;
      expect(page.data).toContainEqual(resource);
    });

    it.each(['wh_00000000000000000000000000', 'wh_nope', 'key_bootstrap', 'st_default', 'anything'])(
      'answers 404 for the unknown id %s',
      async (id) => {
        await expectError(await t.api(`/webhooks/${id}`), 404, `Webhook ${id} not found`);
      },
    );
  });

  describe('rateLimitPerSecond and ordered', () => {
    it('are set on create, shown on the resource, and a limit is removed with null', async () => {
      const created = await createWebhook(t, {
        name: 'paced',
        url: 'https://hooks.example.com/paced',
        events: ['order.created'],
        rateLimitPerSecond: 10_000,
        ordered: true,
      });
      expect(created).toMatchObject({ rateLimitPerSecond: 10_000, ordered: true });
      expect(await webhookRow(t, created.id)).toMatchObject({ rate_limit_per_second: 10_000, ordered: true });
      const cleared = await expectJson<WebhookBody>(
        await t.api(`/webhooks/${created.id}`, { method: 'PUT', json: { rateLimitPerSecond: null } }),
        200,
      );
      expect(cleared).toMatchObject({ rateLimitPerSecond: null, ordered: true });
    });

    it('refuses a bad value on create with 400 and creates nothing', async () => {
      const [{ n: before }] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks');
      const res = await t.api('/webhooks', {
        method: 'POST',
        json: { name: 'bad', url: 'https://hooks.example.com/bad', events: ['order.created'], rateLimitPerSecond: -1, ordered: 1 },
      });
      await expectError(res, 400, RATE_LIMIT_RULE);
      const [{ n: after }] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks');
      expect(after).toBe(before);
    });
  });

  describe('PUT /webhooks/:id', () => {
    let hook: WebhookBody;

    beforeEach(async () => {
      hook = await createWebhook(t, { name: 'before', url: 'https://hooks.example.com/before', events: ['order.created', 'stock.low'] });
    });

    async function put(json: unknown): Promise<Response> {
      return t.api(`/webhooks/${hook.id}`, { method: 'PUT', json });
    }

    it.each<[string, Record<string, unknown>]>([
      ['name', { name: 'after' }],
      ['url', { url: 'https://other.example.com/after' }],
      ['events', { events: ['customer.created'] }],
      ['isActive', { isActive: false }],
      ['headers', { headers: { 'X-Store': 'berlin-1' } }],
      ['retrySchedule', { retrySchedule: [0, 60_000] }],
      ['rateLimitPerSecond', { rateLimitPerSecond: 25 }],
      ['ordered', { ordered: true }],
    ])('changes only %s and keeps every other field', async (_field, change) => {
      await new Promise((resolve) => setTimeout(resolve, 5)); // so that updatedAt can move
      const res = await put(change);
      const text = await res.clone().text();
      const body = await expectJson<WebhookBody>(res, 200);
      const { secret, ...before } = hook;
      expect(Object.keys(body).sort()).toEqual(WEBHOOK_KEYS);
      // A person disabling an endpoint is the reason it is disabled.
      const disabled = change.isActive === false ? { disabledReason: 'manual', disabledAt: expect.stringMatching(ISO_MS) } : {};
      expect(body).toEqual({ ...before, ...change, ...disabled, updatedAt: expect.stringMatching(ISO_MS) });
      expect(Date.parse(body.updatedAt)).toBeGreaterThan(Date.parse(hook.updatedAt));
      expect(text).not.toContain(secret!);
      expect(await expectJson(await t.api(`/webhooks/${hook.id}`), 200)).toEqual(body);
    });

    it('changes several fields at once', async () => {
      const change = { name: 'all', url: 'https://other.example.com/all', events: ['product.created'], isActive: false };
      const body = await expectJson<WebhookBody>(await put(change), 200);
      expect(body).toMatchObject({ id: hook.id, createdAt: hook.createdAt, ...change });
    });

    it('keeps the signing secret', async () => {
      const [{ secret_encrypted: before }] = await t.db.query('SELECT secret_encrypted FROM webhooks WHERE id = $1', [hook.id]);
      await expectJson(await put({ name: 'renamed' }), 200);
      const [{ secret_encrypted: after }] = await t.db.query('SELECT secret_encrypted FROM webhooks WHERE id = $1', [hook.id]);
      expect(after).toBe(before);
    });

    it.each<[string, unknown, string]>([
      [
        'an empty body',
        {},
        'provide at least one of name, url, events, isActive, headers, retrySchedule, rateLimitPerSecond, ordered, auth, tls, filter',
      ],
      ['name empty', { name: '' }, 'name must be 1 to 200 characters'],
      ['name of 201 characters', { name: 'x'.repeat(201) }, 'name must be 1 to 200 characters'],
      ['name null', { name: null }, 'name must be a string'],
      ['url relative', { url: '/relative' }, 'url must be an absolute URL'],
      ['url with user:password', { url: 'https://u:p@hooks.example.com/' }, 'url must not contain a username or password'],
      ['url null', { url: null }, 'url must be a string'],
      ['events empty', { events: [] }, 'events must contain at least one event type'],
      ['events with a duplicate', { events: ['stock.low', 'stock.low'] }, 'events must not contain duplicates'],
      [
        'events with an unknown type',
        { events: ['stock.high'] },
        'events contains an unknown event type: "stock.high"; see GET /event-types',
      ],
      ['events null', { events: null }, 'events must be an array of event types'],
      ['isActive a string', { isActive: 'false' }, 'isActive must be a boolean'],
      ['isActive null', { isActive: null }, 'isActive must be a boolean'],
      ['rateLimitPerSecond 0', { rateLimitPerSecond: 0 }, RATE_LIMIT_RULE],
      ['rateLimitPerSecond 10,001', { rateLimitPerSecond: 10_001 }, RATE_LIMIT_RULE],
      ['rateLimitPerSecond 2.5', { rateLimitPerSecond: 2.5 }, RATE_LIMIT_RULE],
      ['rateLimitPerSecond a string', { rateLimitPerSecond: '5' }, RATE_LIMIT_RULE],
      ['ordered a string', { ordered: 'true' }, 'ordered must be a boolean'],
      ['ordered null', { ordered: null }, 'ordered must be a boolean'],
      ['an unknown field beside a valid one', { name: 'ok', secret: 'whsec_x' }, 'property secret should not exist'],
      ['a valid field beside an invalid one', { name: 'ok', url: 'ftp://x.example.com/' }, 'url must use https:// or http://'],
    ])('refuses %s with 400 and changes nothing', async (_case, json, message) => {
      const before = await webhookRow(t, hook.id);
      await expectError(await put(json), 400, message);
      expect(await webhookRow(t, hook.id)).toEqual(before);
    });

    it('refuses a PUT without a body or with malformed JSON, and changes nothing', async () => {
      const before = await webhookRow(t, hook.id);
      await expectError(
        await t.api(`/webhooks/${hook.id}`, { method: 'PUT' }),
        400,
        'provide at least one of name, url, events, isActive, headers, retrySchedule, rateLimitPerSecond, ordered, auth, tls, filter',
      );
      await expectError(
        await t.api(`/webhooks/${hook.id}`, { method: 'PUT', body: '{"name":', headers: { 'Content-Type': 'application/json' } }),
        400,
        'Malformed JSON in request body',
      );
      expect(await webhookRow(t, hook.id)).toEqual(before);
    });

    it('answers 404 for an unknown id, also with a valid body', async () => {
      const before = await rowCounts(t.db);
      await expectError(
        await t.api('/webhooks/wh_00000000000000000000000000', { method: 'PUT', json: { name: 'x' } }),
        404,
        'Webhook wh_00000000000000000000000000 not found',
      );
      expect(await rowCounts(t.db)).toEqual(before);
    });
  });

  describe('DELETE /webhooks/:id', () => {
    it('deletes with 204 and no body; afterwards every route answers 404', async () => {
      const hook = await createWebhook(t, {});
      const res = await t.api(`/webhooks/${hook.id}`, { method: 'DELETE' });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      expect(await webhookRow(t, hook.id)).toBeUndefined();

      const message = `Webhook ${hook.id} not found`;
      await expectError(await t.api(`/webhooks/${hook.id}`), 404, message);
      await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'DELETE' }), 404, message);
      await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { name: 'x' } }), 404, message);
      await expectError(await t.api(`/webhooks/${hook.id}/rotate-secret`, { method: 'POST' }), 404, message);
      await expectError(await t.api(`/webhooks/${hook.id}/test`, { method: 'POST' }), 404, message);
      const list = await expectJson<{ data: WebhookBody[] }>(await t.api('/webhooks?limit=200'), 200);
      expect(list.data.map((item) => item.id)).not.toContain(hook.id);
    });

    it('answers 404 for an unknown id and deletes nothing', async () => {
      const before = await rowCounts(t.db);
      await expectError(await t.api('/webhooks/wh_00000000000000000000000000', { method: 'DELETE' }), 404);
      expect(await rowCounts(t.db)).toEqual(before);
    });
  });

  describe('POST /webhooks/:id/rotate-secret', () => {
    it('returns the resource with a new secret; the old one is never shown again', async () => {
      const hook = await createWebhook(t, { name: 'rotating' });
      const [{ secret_encrypted: sealedBefore }] = await t.db.query('SELECT secret_encrypted FROM webhooks WHERE id = $1', [hook.id]);

      const res = await t.api(`/webhooks/${hook.id}/rotate-secret`, { method: 'POST' });
      const rotated = await expectJson<WebhookBody>(res, 200);
      expect(Object.keys(rotated).sort()).toEqual(WITH_SECRET_KEYS);
      expect(rotated).toEqual({
        ...hook,
        secret: expect.stringMatching(SECRET),
        updatedAt: expect.stringMatching(ISO_MS),
      });
      expect(rotated.secret).not.toBe(hook.secret);

      const [{ secret_encrypted: sealedAfter }] = await t.db.query('SELECT secret_encrypted FROM webhooks WHERE id = $1', [hook.id]);
      expect(sealedAfter).not.toBe(sealedBefore);
      expect(await rowsContaining(t.db, rotated.secret!)).toBe(0);

      for (const path of [`/webhooks/${hook.id}`, '/webhooks?limit=200']) {
        const text = await (await t.api(path)).text();
        expect(text).not.toContain(hook.secret!);
        expect(text).not.toContain(rotated.secret!);
      }
      const put = await (await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { name: 'rotated' } })).text();
      expect(put).not.toContain('whsec_');

      const again = await expectJson<WebhookBody>(await t.api(`/webhooks/${hook.id}/rotate-secret`, { method: 'POST' }), 200);
      expect(new Set([hook.secret, rotated.secret, again.secret]).size).toBe(3);
    });

    it('signs the next delivery with the new secret, not the old one', async () => {
      const hook = await createWebhook(t, { url: `${receiver.url}/rotate` });
      const rotated = await expectJson<WebhookBody>(await t.api(`/webhooks/${hook.id}/rotate-secret`, { method: 'POST' }), 200);
      const result = await expectJson<{ success: boolean }>(await t.api(`/webhooks/${hook.id}/test`, { method: 'POST' }), 200);
      expect(result.success).toBe(true);
      const [request] = receiver.to('/rotate');
      const signed = `${String(request.headers['x-webhook-timestamp'])}.${request.body.toString('utf8')}`;
      const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update(signed).digest('hex')}`;
      expect(request.headers['x-webhook-signature']).toBe(sign(rotated.secret!));
      expect(request.headers['x-webhook-signature']).not.toBe(sign(hook.secret!));
    });

    it('answers 404 for an unknown id and changes nothing', async () => {
      const before = await t.db.query('SELECT id, secret_encrypted FROM webhooks ORDER BY id');
      await expectError(await t.api('/webhooks/wh_00000000000000000000000000/rotate-secret', { method: 'POST' }), 404);
      expect(await t.db.query('SELECT id, secret_encrypted FROM webhooks ORDER BY id')).toEqual(before);
    });
  });

  describe('POST /webhooks/:id/test', () => {
    it('sends one signed webhook.test delivery synchronously and reports it', async () => {
      const hook = await createWebhook(t, { name: 'tested', url: `${receiver.url}/test-ok` });
      const result = await expectJson(await t.api(`/webhooks/${hook.id}/test`, { method: 'POST' }), 200);
      expect(result).toEqual({
        success: true,
        statusCode: 200,
        durationMs: expect.any(Number),
        error: null,
        eventId: expect.stringMatching(idOf('evt')),
        deliveryId: expect.stringMatching(idOf('del')),
      });
      const requests = receiver.to('/test-ok');
      expect(requests).toHaveLength(1);
      const envelope = JSON.parse(requests[0].body.toString('utf8'));
      expect(envelope).toEqual({
        id: result.eventId,
        type: 'webhook.test',
        timestamp: expect.stringMatching(ISO_MS),
        data: { webhookId: hook.id, name: 'tested', message: expect.any(String) },
      });
      expect(requests[0].headers['x-webhook-id']).toBe(result.eventId);

      const [delivery] = await t.db.query(
        'SELECT webhook_id, event_id, event_type, status, attempt_count, store_id FROM deliveries WHERE id = $1',
        [result.deliveryId],
      );
      expect(delivery).toEqual({
        webhook_id: hook.id,
        event_id: result.eventId,
        event_type: 'webhook.test',
        status: 'succeeded',
        attempt_count: 1,
        store_id: 'st_default',
      });
    });

    it('tests an inactive endpoint too, and reports a failing one without retrying it', async () => {
      receiver.respondWith((request, res) => {
        res.writeHead(request.path === '/test-down' ? 503 : 200, { 'content-type': 'text/plain' });
        res.end('down');
      });
      try {
        const hook = await createWebhook(t, { url: `${receiver.url}/test-down`, isActive: false });
        const result = await expectJson(await t.api(`/webhooks/${hook.id}/test`, { method: 'POST' }), 200);
        expect(result).toMatchObject({ success: false, statusCode: 503, error: expect.any(String) });
        expect(receiver.to('/test-down')).toHaveLength(1);
        const [delivery] = await t.db.query('SELECT status, attempt_count FROM deliveries WHERE id = $1', [result.deliveryId]);
        expect(delivery).toEqual({ status: 'failed', attempt_count: 1 });
      } finally {
        receiver.respondStatus(200, '{"received":true}');
      }
    });

    it('answers 404 for an unknown id and records nothing', async () => {
      const before = await rowCounts(t.db);
      await expectError(await t.api('/webhooks/wh_00000000000000000000000000/test', { method: 'POST' }), 404);
      expect(await rowCounts(t.db)).toEqual(before);
    });
  });

  describe('GET /event-types', () => {
    it('lists the 20 types in 7 categories, each with a description, an example and a schema', async () => {
      const { data } = await expectJson<{ data: Array<Record<string, unknown>> }>(await t.api('/event-types'), 200);
      expect(data).toHaveLength(20);
      expect(data.map((item) => item.type)).toEqual(Object.values(CATALOGUE).flat());
      for (const [category, types] of Object.entries(CATALOGUE)) {
        expect(data.filter((item) => item.category === category).map((item) => item.type)).toEqual(types);
      }
      expect(new Set(data.map((item) => item.category)).size).toBe(7);
      for (const item of data) {
        expect(Object.keys(item).sort()).toEqual(['category', 'description', 'example', 'schema', 'type']);
        expect(item.description).toEqual(expect.stringMatching(/\S/));
        const schema = item.schema as { type: string; properties: Record<string, unknown>; required: string[] };
        const example = item.example as Record<string, unknown>;
        expect(schema).toMatchObject({ type: 'object', properties: expect.any(Object), required: expect.any(Array) });
        // The example is an instance of the schema: every required field present, nothing undeclared.
        for (const field of schema.required) expect(example).toHaveProperty(field);
        for (const field of Object.keys(example)) expect(Object.keys(schema.properties)).toContain(field);
      }
    });

    it('gives the four documented data shapes exactly', async () => {
      const { data } = await expectJson<{ data: Array<{ type: string; example: Record<string, unknown> }> }>(
        await t.api('/event-types'),
        200,
      );
      const fields = (type: string) => Object.keys(data.find((item) => item.type === type)!.example).sort();
      expect(fields('order.created')).toEqual(['currency', 'id', 'orderNumber', 'status', 'total']);
      expect(fields('payment.received')).toEqual(['amount', 'currency', 'orderId', 'orderNumber', 'paymentMethod', 'status']);
      expect(fields('product.created')).toEqual(['id', 'name', 'price', 'sku', 'status']);
      expect(fields('delivery.completed')).toEqual(expect.arrayContaining(['orderId', 'orderNumber']));
    });

    it('is readable with webhooks:read alone', async () => {
      const { key } = await expectJson<{ key: string }>(
        await t.api('/api-keys', { method: 'POST', json: { name: 'reader', scopes: ['webhooks:read'] } }),
        201,
      );
      const { data } = await expectJson<{ data: unknown[] }>(await t.api('/event-types', { key }), 200);
      expect(data).toHaveLength(20);
    });
  });
});

describe('GET /webhooks: pagination and filters', () => {
  let t: TestApp;
  let key: string;
  /** Every endpoint of the store, newest first (ids are time-ordered). */
  let all: WebhookBody[];

  beforeAll(async () => {
    t = await startApp({ overrides: [{ provide: URL_RESOLVER, useValue: fakeResolver({ 'hooks.example.com': ['93.184.215.14'] }) }] });
    // A store of its own, so that the list holds exactly what this block created.
    key = (await createStoreWithKey(t, 'paging', ['webhooks:read', 'webhooks:write'])).key.key;
    const specs = Array.from({ length: 55 }, (_, i) => ({
      name: `hook ${i}`,
      isActive: i % 3 !== 0,
      events: i % 5 === 0 ? ['stock.low', 'order.created'] : ['order.created'],
    }));
    all = [];
    for (let i = 0; i < specs.length; i += 11) {
      all.push(...(await Promise.all(specs.slice(i, i + 11).map((spec) => createWebhook(t, spec, key)))));
    }
    all.sort((a, b) => (a.id < b.id ? 1 : -1));
  });

  afterAll(async () => {
    await t?.close();
  });

  const ids = (items: Array<{ id: string }>) => items.map((item) => item.id);
  const withoutSecret = ({ secret: _secret, ...rest }: WebhookBody) => rest;

  it('answers 50 items by default, newest first, then the rest; nextCursor is null on the last page', async () => {
    const first = await expectJson<{ data: WebhookBody[]; nextCursor: string | null }>(await t.api('/webhooks', { key }), 200);
    expect(first.data).toHaveLength(50);
    expect(first.data).toEqual(all.slice(0, 50).map(withoutSecret));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await expectJson<{ data: WebhookBody[]; nextCursor: string | null }>(
      await t.api(`/webhooks?cursor=${encodeURIComponent(first.nextCursor!)}`, { key }),
      200,
    );
    expect(ids(second.data)).toEqual(ids(all.slice(50)));
    expect(second.nextCursor).toBeNull();
  });

  it.each([1, 7, 11, 54, 55, 200])('walks every page with limit=%i: no item twice, none missing', async (limit) => {
    const { pages, cursors } = await allPages<WebhookBody>(t, `/webhooks?limit=${limit}`, key);
    expect(ids(pages.flat())).toEqual(ids(all));
    for (const page of pages.slice(0, -1)) expect(page).toHaveLength(limit);
    expect(pages[pages.length - 1].length).toBeGreaterThan(0);
    expect(cursors[cursors.length - 1]).toBeNull();
    expect(cursors.slice(0, -1).every((cursor) => typeof cursor === 'string')).toBe(true);
    expect(pages).toHaveLength(Math.ceil(all.length / limit));
  });

  it('keeps paging correctly while endpoints are added between pages', async () => {
    const first = await expectJson<{ data: WebhookBody[]; nextCursor: string }>(await t.api('/webhooks?limit=20', { key }), 200);
    const added = await createWebhook(t, { name: 'added while paging' }, key);
    try {
      const rest = await allPages<WebhookBody>(t, '/webhooks?limit=20', key, first.nextCursor);
      expect(ids([...first.data, ...rest.pages.flat()])).toEqual(ids(all));
    } finally {
      await t.api(`/webhooks/${added.id}`, { method: 'DELETE', key });
    }
  });

  it.each<[string, (hook: WebhookBody) => boolean]>([
    ['isActive=true', (hook) => hook.isActive],
    ['isActive=false', (hook) => !hook.isActive],
    ['event=stock.low', (hook) => hook.events.includes('stock.low')],
    ['event=order.created', (hook) => hook.events.includes('order.created')],
    ['event=customer.created', () => false],
    ['isActive=true&event=stock.low', (hook) => hook.isActive && hook.events.includes('stock.low')],
    ['isActive=false&event=stock.low', (hook) => !hook.isActive && hook.events.includes('stock.low')],
  ])('filters with %s, across pages', async (query, keep) => {
    const expected = ids(all.filter(keep));
    const { pages } = await allPages<WebhookBody>(t, `/webhooks?${query}&limit=4`, key);
    expect(ids(pages.flat())).toEqual(expected);
    const single = await expectJson<{ data: WebhookBody[]; nextCursor: null }>(await t.api(`/webhooks?${query}&limit=200`, { key }), 200);
    expect(ids(single.data)).toEqual(expected);
    expect(single.nextCursor).toBeNull();
  });

  it.each<[string, string]>([
    ['limit=0', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['limit=201', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['limit=abc', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['limit=-1', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['limit=1.5', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['limit=', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['isActive=yes', 'isActive must be true or false'],
    ['isActive=1', 'isActive must be true or false'],
    ['event=order.shipped', 'event must be one of the event types of GET /event-types'],
    ['event=webhook.test', 'event must be one of the event types of GET /event-types'],
    ['cursor=not-a-cursor', 'cursor is invalid; pass the nextCursor of a previous page'],
    [`cursor=${Buffer.from('{"after":5}').toString('base64url')}`, 'cursor is invalid; pass the nextCursor of a previous page'],
    [`cursor=${Buffer.from("wh_1' OR 1=1 --").toString('base64url')}`, 'cursor is invalid; pass the nextCursor of a previous page'],
    [`cursor=${'a'.repeat(201)}`, 'cursor must be shorter than or equal to 200 characters'],
  ])('refuses the query %s with 400', async (query, message) => {
    await expectError(await t.api(`/webhooks?${query}`, { key }), 400, message);
  });
});

describe('URL policy at registration (ALLOW_PRIVATE_NETWORKS=false, ALLOW_HTTP_URLS=false)', () => {
  let t: TestApp;
  const answers: Record<string, string[]> = {
    'hooks.example.com': ['93.184.215.14'],
    'v6.example.com': ['2606:4700:4700::1111'],
    'internal.example.com': ['10.0.0.7'],
    localhost: ['127.0.0.1', '::1'],
    'mixed.example.com': ['93.184.215.14', '192.168.1.20'],
    'metadata.example.com': ['::ffff:169.254.169.254'],
    'ula.example.com': ['fd12:3456::1'],
    'rebinding.example.com': ['93.184.215.14'],
  };
  const resolver = fakeResolver(answers);

  beforeAll(async () => {
    t = await startApp({
      env: { ALLOW_PRIVATE_NETWORKS: 'false', ALLOW_HTTP_URLS: 'false' },
      overrides: [{ provide: URL_RESOLVER, useValue: resolver }],
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  async function expectRefused(url: string, message: string): Promise<void> {
    const before = await rowCounts(t.db);
    const body = await expectError(
      await t.api('/webhooks', { method: 'POST', json: { name: 'blocked', url, events: ['order.created'] } }),
      400,
    );
    expect(body.message).toEqual([message]);
    expect(await rowCounts(t.db)).toEqual(before);
  }

  it.each<[string, string]>([
    ['https://127.0.0.1/', 'a loopback address (127.0.0.1)'],
    ['https://127.255.0.9/', 'a loopback address (127.255.0.9)'],
    ['https://10.1.2.3/', 'a private address (10.1.2.3)'],
    ['https://172.16.0.1/', 'a private address (172.16.0.1)'],
    ['https://172.31.255.254/', 'a private address (172.31.255.254)'],
    ['https://192.168.0.10:8443/in', 'a private address (192.168.0.10)'],
    ['https://100.64.0.1/', 'a shared (carrier-grade NAT) address (100.64.0.1)'],
    ['https://169.254.169.254/latest/meta-data/', 'a link-local address (169.254.169.254)'],
    ['https://0.0.0.0/', 'an unspecified address (0.0.0.0)'],
    ['https://224.0.0.1/', 'a multicast address (224.0.0.1)'],
    ['https://255.255.255.255/', 'a broadcast address (255.255.255.255)'],
    ['https://240.0.0.1/', 'a reserved address (240.0.0.1)'],
    ['https://192.0.2.1/', 'a reserved address (192.0.2.1)'],
    ['https://[::1]/', 'a loopback address (::1)'],
    ['https://[::]/', 'an unspecified address (::)'],
    ['https://[fe80::1]/', 'a link-local address (fe80::1)'],
    ['https://[fd00::1]/', 'a unique-local address (fd00::1)'],
    ['https://[ff02::1]/', 'a multicast address (ff02::1)'],
    ['https://[::ffff:127.0.0.1]/', 'a loopback address (::ffff:7f00:1, which carries 127.0.0.1)'],
    ['https://[::ffff:10.0.0.1]/', 'a private address (::ffff:a00:1, which carries 10.0.0.1)'],
    ['https://[::ffff:a9fe:a9fe]/', 'a link-local address (::ffff:a9fe:a9fe, which carries 169.254.169.254)'],
    ['https://[64:ff9b::7f00:1]/', 'a loopback address (64:ff9b::7f00:1, which carries 127.0.0.1)'],
    ['https://[2002:c0a8:101::1]/', 'a private address (2002:c0a8:101::1, which carries 192.168.1.1)'],
  ])('refuses the IP literal %s', async (url, described) => {
    await expectRefused(url, `url host is ${described}`);
  });

  it.each<[string, string]>([
    ['https://2130706433/', 'decimal'],
    ['https://0x7f000001/', 'hexadecimal'],
    ['https://0x7f.0.0.1/', 'hexadecimal octet'],
    ['https://0177.0.0.1/', 'octal'],
    ['https://0177.1/', 'octal short form'],
    ['https://127.1/', 'short form'],
    ['https://127.0.1/', 'three-part short form'],
  ])('refuses loopback written as %s (%s)', async (url) => {
    await expectRefused(url, 'url host is a loopback address (127.0.0.1)');
  });

  it.each<[string, string]>([
    ['https://012.0.0.1/', 'a private address (10.0.0.1)'],
    ['https://0xa9fea9fe/', 'a link-local address (169.254.169.254)'],
    ['https://3232235777/', 'a private address (192.168.1.1)'],
    ['https://0/', 'an unspecified address (0.0.0.0)'],
  ])('refuses other IPv4 notations: %s', async (url, described) => {
    await expectRefused(url, `url host is ${described}`);
  });

  it('judges IP literals without asking DNS', async () => {
    resolver.mockClear();
    await expectRefused('https://2130706433/', 'url host is a loopback address (127.0.0.1)');
    await expectRefused('https://[::ffff:127.0.0.1]/', 'url host is a loopback address (::ffff:7f00:1, which carries 127.0.0.1)');
    expect(resolver).not.toHaveBeenCalled();
  });

  it.each<[string, string]>([
    ['https://internal.example.com/hook', 'url resolves to a private address (10.0.0.7)'],
    ['https://localhost/hook', 'url resolves to a loopback address (127.0.0.1)'],
    ['https://mixed.example.com/hook', 'url resolves to a private address (192.168.1.20)'],
    ['https://metadata.example.com/', 'url resolves to a link-local address (::ffff:169.254.169.254, which carries 169.254.169.254)'],
    ['https://ula.example.com/', 'url resolves to a unique-local address (fd12:3456::1)'],
  ])('refuses a URL whose host name resolves to a non-public address: %s', async (url, message) => {
    resolver.mockClear();
    await expectRefused(url, message);
    expect(resolver).toHaveBeenCalledWith(new URL(url).hostname);
  });

  it('refuses http:// when ALLOW_HTTP_URLS is false', async () => {
    await expectRefused('http://hooks.example.com/hook', 'url must use https://');
  });

  it('refuses a host that does not resolve', async () => {
    await expectRefused('https://unknown.example.com/', 'url host does not resolve');
  });

  it.each([
    'https://hooks.example.com/hook',
    'https://v6.example.com/hook',
    'https://93.184.215.14/hook',
    'https://[2606:4700:4700::1111]/hook',
  ])('accepts the public %s', async (url) => {
    const body = await createWebhook(t, { url });
    expect(body.url).toBe(url);
  });

  it('refuses a private URL in a PUT and changes nothing', async () => {
    const hook = await createWebhook(t, { url: 'https://hooks.example.com/put' });
    const before = await webhookRow(t, hook.id);
    for (const [url, message] of [
      ['https://[::1]/', 'url host is a loopback address (::1)'],
      ['https://internal.example.com/', 'url resolves to a private address (10.0.0.7)'],
      ['http://hooks.example.com/put', 'url must use https://'],
    ]) {
      const body = await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { url } }), 400);
      expect(body.message).toEqual([message]);
    }
    expect(await webhookRow(t, hook.id)).toEqual(before);
  });

  it('refuses to test an endpoint whose name has since come to resolve to a private address', async () => {
    const hook = await createWebhook(t, { url: 'https://rebinding.example.com/hook' });
    answers['rebinding.example.com'] = ['127.0.0.1'];
    try {
      const result = await expectJson(await t.api(`/webhooks/${hook.id}/test`, { method: 'POST' }), 200);
      expect(result).toMatchObject({ success: false, statusCode: null, error: expect.stringMatching(/loopback/) });
    } finally {
      answers['rebinding.example.com'] = ['93.184.215.14'];
    }
  });
});
