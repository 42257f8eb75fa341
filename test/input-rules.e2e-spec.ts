import { startApp, TestApp } from './support/app';
import { ChildApp } from './support/child-app';
import { createTestDatabase, type TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { Receiver } from './support/receiver';
import { createStoreWithKey, createWebhook, expectError, expectJson, rowCounts } from './support/expectations';

/**
 * The input rules of every route, each in the words a client is meant to read (docs/input-rules.md).
 * Every refusal is checked to have stored nothing.
 */
describe('input rules', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  });

  afterAll(async () => {
    await t?.close();
  });

  /** Sends `init` to `path` and expects a 400/415… with `message`, and no change to any table. */
  async function refused(path: string, init: Parameters<TestApp['api']>[1], status: number, message?: string | RegExp): Promise<string[]> {
    const before = await rowCounts(t.db);
    const body = await expectError(await t.api(path, init), status, message);
    expect(await rowCounts(t.db)).toEqual(before);
    return Array.isArray(body.message) ? body.message : [body.message];
  }

  describe('a missing required field', () => {
    const webhook = { name: 'endpoint', url: 'https://hooks.example.com/in', events: ['order.created'] };
    const key = { name: 'key', scopes: ['webhooks:read'] };
    const event = { type: 'order.created', data: { id: 'ord_1', orderNumber: '1001', status: 'PENDING', total: 1, currency: 'EUR' } };

    it.each<[string, string, string, Record<string, unknown>]>([
      ['POST /webhooks', 'name', '/webhooks', webhook],
      ['POST /webhooks', 'url', '/webhooks', webhook],
      ['POST /webhooks', 'events', '/webhooks', webhook],
      ['POST /api-keys', 'name', '/api-keys', key],
      ['POST /api-keys', 'scopes', '/api-keys', key],
      ['POST /stores/:id/api-keys', 'name', '/stores/st_default/api-keys', key],
      ['POST /stores', 'name', '/stores', { name: 'shop' }],
      ['POST /events', 'type', '/events', event],
      ['POST /events', 'data', '/events', event],
    ])('%s without %s is answered "… is required" and nothing else about it', async (_route, field, path, valid) => {
      const json = Object.fromEntries(Object.entries(valid).filter(([name]) => name !== field));
      expect(await refused(path, { method: 'POST', json }, 400)).toEqual([`${field} is required`]);
    });

    it('is listed beside the other problems of the body, one line per field', async () => {
      const messages = await refused('/webhooks', { method: 'POST', json: { name: '' } }, 400);
      expect(messages.sort()).toEqual(['events is required', 'name must be 1 to 200 characters', 'url is required']);
    });

    it('is every field of a body that is empty or absent', async () => {
      const all = ['events is required', 'name is required', 'url is required'];
      expect((await refused('/webhooks', { method: 'POST', json: {} }, 400)).sort()).toEqual(all);
      expect((await refused('/webhooks', { method: 'POST' }, 400)).sort()).toEqual(all);
    });
  });

  describe('a body that is not declared as JSON', () => {
    const json = JSON.stringify({ name: 'endpoint', url: 'https://hooks.example.com/in', events: ['order.created'] });

    it.each([
      ['a form', 'application/x-www-form-urlencoded', 'name=a&url=https://hooks.example.com/in'],
      ['text, even if it holds JSON', 'text/plain', json],
      ['XML', 'application/xml', '<webhook/>'],
    ])('is answered 415 naming application/json: %s', async (_case, contentType, body) => {
      const message = `The request body must be JSON sent with Content-Type: application/json (got Content-Type "${contentType}")`;
      await refused('/webhooks', { method: 'POST', body, headers: { 'Content-Type': contentType } }, 415, message);
    });

    it('is answered 415 on every route that takes a body, without a Content-Type too', async () => {
      const hook = await createWebhook(t, {});
      const message = /must be JSON sent with Content-Type: application\/json/;
      await refused(`/webhooks/${hook.id}`, { method: 'PUT', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }, 415, message);
      await refused('/events', { method: 'POST', body: 'type=order.created', headers: { 'Content-Type': 'text/plain' } }, 415, message);
      await refused('/stores', { method: 'POST', body: new TextEncoder().encode('{"name":"shop"}') }, 415, message);
      // A request without a body needs no JSON Content-Type, whatever it declares.
      const rotated = await t.api(`/webhooks/${hook.id}/rotate-secret`, { method: 'POST', headers: { 'Content-Type': 'text/plain' } });
      expect(rotated.status).toBe(200);
    });
  });

  describe('an unknown event type', () => {
    it('is echoed when published, with the type it is probably a typo of', async () => {
      const data = { id: 'ord_1', orderNumber: '1001', status: 'PENDING', total: 1, currency: 'EUR' };
      await refused(
        '/events',
        { method: 'POST', json: { type: 'order.creatd', data } },
        400,
        'type is an unknown event type: "order.creatd" (did you mean "order.created"?); see GET /event-types',
      );
      await refused(
        '/events',
        { method: 'POST', json: { type: 'order.shipped', data } },
        400,
        'type is an unknown event type: "order.shipped"; see GET /event-types',
      );
    });

    it('is answered in the same words when subscribed to, each unknown entry with its suggestion', async () => {
      const json = {
        name: 'endpoint',
        url: 'https://hooks.example.com/in',
        events: ['order.created', 'payment.recieved', 'ORDER.UPDATED'],
      };
      await refused(
        '/webhooks',
        { method: 'POST', json },
        400,
        'events contains unknown event types: "payment.recieved" (did you mean "payment.received"?), "ORDER.UPDATED" (did you mean "order.updated"?); see GET /event-types',
      );
    });
  });

  describe('a field named like an Object.prototype member', () => {
    const NAMES = ['constructor', '__proto__', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'];
    const valid = '"name":"endpoint","url":"https://hooks.example.com/in","events":["order.created"]';
    const data = '"id":"ord_1","orderNumber":"1001","status":"PENDING","total":1,"currency":"EUR"';

    /** Raw JSON text: `JSON.parse` keeps `__proto__` as an own key, as the body parser does. */
    function post(text: string): Parameters<TestApp['api']>[1] {
      return { method: 'POST', body: text, headers: { 'Content-Type': 'application/json' } };
    }

    it.each(NAMES)('is refused like any unknown field in a webhook body: %s', async (name) => {
      await refused('/webhooks', post(`{${valid},"${name}":{"isActive":false}}`), 400, `property ${name} should not exist`);
    });

    it.each(NAMES)('is refused in the other bodies too: %s', async (name) => {
      await refused('/stores', post(`{"name":"shop","${name}":1}`), 400, `property ${name} should not exist`);
      await refused('/api-keys', post(`{"name":"k","scopes":["webhooks:read"],"${name}":1}`), 400, `property ${name} should not exist`);
      const hook = await createWebhook(t, {});
      const before = await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id]);
      await expectError(
        await t.api(`/webhooks/${hook.id}`, {
          method: 'PUT',
          body: `{"${name}":{"name":"renamed"}}`,
          headers: { 'Content-Type': 'application/json' },
        }),
        400,
        `property ${name} should not exist`,
      );
      expect(await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id])).toEqual(before);
    });

    it.each(NAMES)("is refused inside an event's data, which is delivered byte for byte: %s", async (name) => {
      await refused('/events', post(`{"type":"order.created","data":{${data},"${name}":1}}`), 400, `data.${name} is not allowed`);
    });

    it.each(NAMES)('is refused as a query parameter: %s', async (name) => {
      await expectError(await t.api(`/webhooks?${name}=1`), 400, `property ${name} should not exist`);
      await expectError(await t.api(`/stores?limit=5&${name}=x`), 400, `property ${name} should not exist`);
    });
  });

  describe('a name with characters that do not belong in one', () => {
    const BAD = [
      ['a line feed', 'ops\nFAKE LOG LINE', 'U+000A, a control character'],
      ['a carriage return', 'ops\r', 'U+000D, a control character'],
      ['a tab', 'ops\tteam', 'U+0009, a control character'],
      ['an escape (terminal colours)', '\u001b[31mred', 'U+001B, a control character'],
      ['a C1 control', 'ops\u0085', 'U+0085, a control character'],
      ['a line separator', 'ops\u2028x', 'U+2028, a line separator'],
      ['a right-to-left override', 'invoice\u202Efdp.exe', 'U+202E, a bidirectional control'],
      ['a right-to-left isolate', '\u2067ops', 'U+2067, a bidirectional control'],
      ['an unpaired surrogate', 'ops\ud800', 'U+D800, an unpaired surrogate'],
    ];
    const message = (found: string) =>
      `name must not contain control characters, line separators, bidirectional controls or unpaired surrogates (it contains ${found})`;

    it.each(BAD)('is refused for a webhook, created or renamed: %s', async (_case, name, found) => {
      const json = { name, url: 'https://hooks.example.com/in', events: ['order.created'] };
      await refused('/webhooks', { method: 'POST', json }, 400, message(found));
      const hook = await createWebhook(t, {});
      const before = await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id]);
      await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { name } }), 400, message(found));
      expect(await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id])).toEqual(before);
    });

    it.each(BAD)('is refused for an API key and a store: %s', async (_case, name, found) => {
      await refused('/api-keys', { method: 'POST', json: { name, scopes: ['webhooks:read'] } }, 400, message(found));
      await refused('/stores/st_default/api-keys', { method: 'POST', json: { name, scopes: ['webhooks:read'] } }, 400, message(found));
      await refused('/stores', { method: 'POST', json: { name } }, 400, message(found));
    });
  });

  describe('a URL with characters the URL parser would remove', () => {
    it.each([
      ['a line feed', 'https://hooks.example.com/in\nX-Injected: 1', 'url must not contain a control character (found U+000A)'],
      ['a carriage return', 'https://hooks.example.com/\rin', 'url must not contain a control character (found U+000D)'],
      ['a tab in the host', 'https://hooks.exam\tple.com/in', 'url must not contain a control character (found U+0009)'],
      ['a trailing line feed', 'https://hooks.example.com/in\n', 'url must not contain a control character (found U+000A)'],
      ['a leading space', ' https://hooks.example.com/in', 'url must not begin or end with spaces'],
      ['an unpaired surrogate', 'https://hooks.example.com/\ud800', 'url must not contain an unpaired surrogate (found U+D800)'],
    ])('is refused, not cleaned: %s', async (_case, url, message) => {
      await refused('/webhooks', { method: 'POST', json: { name: 'endpoint', url, events: ['order.created'] } }, 400, message);
      const hook = await createWebhook(t, {});
      await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { url } }), 400, message);
      expect((await t.db.query<{ url: string }>('SELECT url FROM webhooks WHERE id = $1', [hook.id]))[0].url).toBe(hook.url);
    });
  });

  describe('a limit that is not plain decimal digits', () => {
    it.each(['0x2', '1e1', '0b11', '2.0', '%207', '+5'])('is refused on every list: limit=%s', async (limit) => {
      const message = 'limit must be an integer from 1 to 200 in plain decimal digits';
      const hook = await createWebhook(t, {});
      for (const path of ['/webhooks', '/stores', `/webhooks/${hook.id}/deliveries`]) {
        await expectError(await t.api(`${path}?limit=${limit}`), 400, message);
      }
    });
  });
});

describe('the webhook limit of a store (MAX_WEBHOOKS_PER_STORE=3)', () => {
  let t: TestApp;
  const LIMIT_MESSAGE = 'This store already has 3 webhooks, the most a store may hold; delete one before registering another';
  const body = (n: number) => ({ name: `endpoint ${n}`, url: `https://hooks.example.com/${n}`, events: ['order.created'] });

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_PER_MINUTE: '0', MAX_WEBHOOKS_PER_STORE: '3' } });
  });

  afterAll(async () => {
    await t?.close();
  });

  async function countIn(storeId: string): Promise<number> {
    const [{ count }] = await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM webhooks WHERE store_id = $1', [storeId]);
    return count;
  }

  it('answers one webhook more with 409 naming the limit, stores nothing, and leaves other stores and updates alone', async () => {
    const { storeId, key } = await createStoreWithKey(t, 'full store', ['webhooks:read', 'webhooks:write']);
    const created = [];
    for (let n = 0; n < 3; n++) created.push(await createWebhook(t, body(n), key.key));
    const before = await rowCounts(t.db);
    await expectError(await t.api('/webhooks', { method: 'POST', json: body(3), key: key.key }), 409, LIMIT_MESSAGE);
    expect(await rowCounts(t.db)).toEqual(before);
    expect(await countIn(storeId)).toBe(3);

    // Another store counts its own webhooks; a store at its limit still updates its webhooks.
    const other = await createStoreWithKey(t, 'other store', ['webhooks:write']);
    await createWebhook(t, body(4), other.key.key);
    await expectJson(await t.api(`/webhooks/${created[0].id}`, { method: 'PUT', json: { name: 'renamed' }, key: key.key }), 200);

    // Deleting one makes room for one.
    expect((await t.api(`/webhooks/${created[1].id}`, { method: 'DELETE', key: key.key })).status).toBe(204);
    await createWebhook(t, body(5), key.key);
    await expectError(await t.api('/webhooks', { method: 'POST', json: body(6), key: key.key }), 409, LIMIT_MESSAGE);
  });

  it('holds when many creates arrive at once: exactly the limit is stored, the rest are told 409', async () => {
    const { storeId, key } = await createStoreWithKey(t, 'busy store', ['webhooks:write']);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, n) => t.api('/webhooks', { method: 'POST', json: body(n), key: key.key })),
    );
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([201, 201, 201, ...Array<number>(9).fill(409)]);
    expect(await countIn(storeId)).toBe(3);
  });
});

describe('the rate limit (RATE_LIMIT_PER_MINUTE=3)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('says what it counted: the client IP address for requests without a valid key, the key otherwise', async () => {
    for (let i = 0; i < 3; i++) expect((await t.api('/webhooks', { key: `made-up-key-${i}` })).status).toBe(401);
    await expectError(
      await t.api('/webhooks', { key: null }),
      429,
      /^Rate limit exceeded: at most 3 requests a minute per client IP address for requests without a valid API key; retry in \d+ s \(Retry-After\)$/,
    );
    for (let i = 0; i < 3; i++) expect((await t.api('/event-types')).status).toBe(200);
    await expectError(await t.api('/event-types'), 429, /^Rate limit exceeded: at most 3 requests a minute per API key; retry in \d+ s/);
  });
});

describe('LOG_LEVEL=debug', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  let app: ChildApp | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await ChildApp.killAll();
    await receiver?.close();
    await db?.drop();
  });

  it('prints debug lines: requests as they arrive, the probes, each event published and each attempt', async () => {
    app = await ChildApp.start({ databaseUrl: db.url, name: 'log-level-debug', env: { LOG_LEVEL: 'debug' } });
    const hook = await expectJson<{ id: string }>(
      await app.api('/webhooks', { method: 'POST', json: { name: 'debug', url: `${receiver.url}/in`, events: ['order.created'] } }),
      201,
    );
    const data = { id: 'ord_1', orderNumber: '1001', status: 'PENDING', total: 1, currency: 'EUR' };
    const event = await expectJson<{ id: string }>(
      await app.api('/events', { method: 'POST', json: { type: 'order.created', data } }),
      202,
    );
    await eventually(
      async () => app!.logLines().filter((line) => line.level === 20 && line.context === 'Dispatcher'),
      (lines) => lines.length > 0,
      { what: 'a debug line of the attempt' },
    );
    await app.kill('SIGTERM');
    await app.waitForExit(20_000);

    const debug = app.logLines().filter((line) => line.level === 20) as Array<{ msg: string; context?: string; req?: { url: string } }>;
    expect(debug).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ msg: 'request received', req: expect.objectContaining({ url: '/api/v1/external/events' }) }),
        expect.objectContaining({ msg: 'request completed', req: expect.objectContaining({ url: '/health' }) }),
        expect.objectContaining({
          context: 'EventPublisher',
          msg: `event ${event.id} (order.created) of st_default published to 1 endpoint(s)`,
        }),
        expect.objectContaining({
          context: 'Dispatcher',
          msg: expect.stringMatching(
            new RegExp(`^delivery del_\\w+ \\(event ${event.id}\\) attempt 1 to ${hook.id}: HTTP 200 in \\d+ ms; succeeded$`),
          ),
        }),
      ]),
    );
  });
});
