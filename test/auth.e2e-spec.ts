import { createHash } from 'node:crypto';
import type { OpenAPIObject } from '@nestjs/swagger';
import { SCOPES, type Scope } from '../src/auth/scopes';
import { previewOpenApiDocument } from '../src/openapi';
import { ADMIN_KEY, startApp, TestApp } from './support/app';
import {
  allPages,
  CreatedKey,
  createStoreWithKey,
  createWebhook,
  expectError,
  expectJson,
  idOf,
  ISO_MS,
  rowCounts,
  rowsContaining,
  WebhookBody,
} from './support/expectations';
import { eventually } from './support/eventually';

const KEY_TEXT = /^hlk_[A-Za-z0-9_-]{43}$/;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface ListedKey {
  id: string;
  name: string;
  scopes: string[];
  storeId: string;
  createdAt: string;
  lastUsedAt: string | null;
}

interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path, with `:webhook`, `:key`, `:store` to fill in. */
  path: string;
  scope: Scope;
  /** A valid body, so that a broken guard would let the request through and change something. */
  json?: unknown;
}

const ORDER = { id: 'ord_1', orderNumber: 'ORD-1', status: 'PENDING', total: 100, currency: 'EUR' };

/** Every store route with the scope it requires. */
const ROUTES: Route[] = [
  { method: 'POST', path: '/api-keys', scope: 'api-keys:write', json: { name: 'new', scopes: ['webhooks:read'] } },
  { method: 'GET', path: '/api-keys', scope: 'api-keys:write' },
  { method: 'DELETE', path: '/api-keys/:key', scope: 'api-keys:write' },
  { method: 'POST', path: '/stores', scope: 'stores:write', json: { name: 'new store' } },
  { method: 'GET', path: '/stores', scope: 'stores:write' },
  { method: 'POST', path: '/stores/:store/api-keys', scope: 'stores:write', json: { name: 'new', scopes: ['webhooks:read'] } },
  { method: 'POST', path: '/stores/:store/portal-sessions', scope: 'stores:write', json: { capabilities: ['read'] } },
  { method: 'DELETE', path: '/stores/:store/portal-sessions/ps_00000000000000000000000000', scope: 'stores:write' },
  { method: 'POST', path: '/portal-sessions', scope: 'portal:write', json: { capabilities: ['read'] } },
  { method: 'DELETE', path: '/portal-sessions/ps_00000000000000000000000000', scope: 'portal:write' },
  { method: 'GET', path: '/webhooks', scope: 'webhooks:read' },
  {
    method: 'POST',
    path: '/webhooks',
    scope: 'webhooks:write',
    json: { name: 'new', url: 'http://127.0.0.1:9/hook', events: ['order.created'] },
  },
  { method: 'GET', path: '/webhooks/:webhook', scope: 'webhooks:read' },
  { method: 'PUT', path: '/webhooks/:webhook', scope: 'webhooks:write', json: { name: 'renamed' } },
  { method: 'DELETE', path: '/webhooks/:webhook', scope: 'webhooks:write' },
  { method: 'POST', path: '/webhooks/:webhook/test', scope: 'webhooks:write' },
  { method: 'POST', path: '/webhooks/:webhook/rotate-secret', scope: 'webhooks:write' },
  { method: 'GET', path: '/webhooks/:webhook/deliveries', scope: 'webhooks:read' },
  { method: 'POST', path: '/webhooks/:webhook/deliveries/retry-failed', scope: 'webhooks:write', json: {} },
  { method: 'POST', path: '/webhooks/:webhook/replay', scope: 'webhooks:write', json: { since: '2026-01-01T00:00:00.000Z' } },
  { method: 'GET', path: '/event-types', scope: 'webhooks:read' },
  { method: 'GET', path: '/event-types/order.created', scope: 'webhooks:read' },
  { method: 'POST', path: '/events', scope: 'events:write', json: { type: 'order.created', data: ORDER } },
  { method: 'POST', path: '/events/batch', scope: 'events:write', json: { events: [{ type: 'order.created', data: ORDER }] } },
  { method: 'GET', path: '/events/evt_00000000000000000000000000', scope: 'webhooks:read' },
  { method: 'GET', path: '/deliveries/del_00000000000000000000000000', scope: 'webhooks:read' },
  { method: 'POST', path: '/deliveries/del_00000000000000000000000000/retry', scope: 'webhooks:write' },
];

const label = (route: Route) => `${route.method} ${route.path}`;

describe('authentication and scopes', () => {
  let t: TestApp;
  let webhook: WebhookBody;
  /** For each scope, a key holding every scope but that one. */
  const lacking = {} as Record<Scope, string>;
  let revokedKey: string;

  function fill(path: string): string {
    return path.replace(':webhook', webhook.id).replace(':key', 'key_00000000000000000000000000').replace(':store', 'st_default');
  }

  function call(route: Route, key: string | null): Promise<Response> {
    return t.api(fill(route.path), { method: route.method, json: route.json, key });
  }

  async function createKey(scopes: string[], key = ADMIN_KEY): Promise<CreatedKey> {
    return expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: `key ${scopes.join(' ')}`, scopes }, key }),
      201,
    );
  }

  beforeAll(async () => {
    t = await startApp();
    webhook = await createWebhook(t, { url: 'http://127.0.0.1:9/hook' });
    for (const scope of SCOPES) lacking[scope] = (await createKey(SCOPES.filter((s) => s !== scope))).key;
    const revoked = await createKey([...SCOPES]);
    expect((await t.api(`/api-keys/${revoked.id}`, { method: 'DELETE' })).status).toBe(204);
    revokedKey = revoked.key;
  });

  afterAll(async () => {
    await t?.close();
  });

  describe.each(ROUTES.map((route) => [label(route), route] as const))('%s', (_label, route) => {
    it('answers 401 without X-API-Key, and changes nothing', async () => {
      const before = await rowCounts(t.db);
      await expectError(await call(route, null), 401, 'Missing X-API-Key header');
      expect(await rowCounts(t.db)).toEqual(before);
    });

    it('answers 401 for an unknown or revoked key', async () => {
      const before = await rowCounts(t.db);
      await expectError(await call(route, 'hlk_not_a_key_that_exists_0000000000000000000'), 401, 'Invalid API key');
      await expectError(await call(route, revokedKey), 401, 'Invalid API key');
      expect(await rowCounts(t.db)).toEqual(before);
    });

    it(`answers 403 for a key holding every scope but ${route.scope}, and changes nothing`, async () => {
      const before = await rowCounts(t.db);
      const webhookBefore = await t.db.query('SELECT * FROM webhooks WHERE id = $1', [webhook.id]);
      await expectError(await call(route, lacking[route.scope]), 403, `This API key lacks the scope ${route.scope}`);
      expect(await rowCounts(t.db)).toEqual(before);
      expect(await t.db.query('SELECT * FROM webhooks WHERE id = $1', [webhook.id])).toEqual(webhookBefore);
    });
  });

  it('lets a key holding only the one scope a route needs through the guard', async () => {
    for (const route of ROUTES.filter((r) => r.method === 'GET')) {
      const { key } = await createKey([route.scope]);
      const res = await call(route, key);
      expect({ route: label(route), status: res.status }).toEqual({ route: label(route), status: /_0{26}/.test(route.path) ? 404 : 200 });
    }
  });

  it('checks the key before validating the body or looking the id up', async () => {
    await expectError(await t.api('/webhooks', { method: 'POST', json: { bogus: true }, key: null }), 401);
    await expectError(await t.api('/webhooks', { method: 'POST', json: { bogus: true }, key: lacking['webhooks:write'] }), 403);
    await expectError(await t.api('/webhooks/wh_00000000000000000000000000', { key: null }), 401);
    await expectError(await t.api('/webhooks/wh_00000000000000000000000000', { key: lacking['webhooks:read'] }), 403);
  });

  it.each<[string, Record<string, string>]>([
    ['an empty X-API-Key', { 'X-API-Key': '' }],
    ['the key as a bearer token', { Authorization: `Bearer ${ADMIN_KEY}` }],
    ['the key in another header', { 'X-Api-Token': ADMIN_KEY }],
    ['the key in other case', { 'X-API-Key': ADMIN_KEY.toUpperCase() }],
    ['the key with a suffix', { 'X-API-Key': `${ADMIN_KEY}x` }],
    ['a 10 000-character key', { 'X-API-Key': 'k'.repeat(10_000) }],
  ])('answers 401 for %s', async (_case, headers) => {
    await expectError(await t.api('/webhooks', { headers, key: null }), 401);
  });

  it('accepts the key in a query string nowhere (only the header counts)', async () => {
    await expectError(await t.api(`/webhooks?apiKey=${ADMIN_KEY}`, { key: null }), 401);
  });
});

describe('API keys (POST/GET/DELETE /api-keys)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  async function create(json: unknown, key = ADMIN_KEY): Promise<Response> {
    return t.api('/api-keys', { method: 'POST', json, key });
  }

  async function list(key = ADMIN_KEY): Promise<ListedKey[]> {
    return (await expectJson<{ data: ListedKey[] }>(await t.api('/api-keys', { key }), 200)).data;
  }

  it('creates a key and shows its text once, in the create response', async () => {
    const created = await expectJson<CreatedKey>(
      await create({ name: 'ERP integration', scopes: ['webhooks:read', 'webhooks:write'] }),
      201,
    );
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'id', 'key', 'name', 'scopes', 'storeId']);
    expect(created).toEqual({
      id: expect.stringMatching(idOf('key')),
      name: 'ERP integration',
      scopes: ['webhooks:read', 'webhooks:write'],
      storeId: 'st_default',
      key: expect.stringMatching(KEY_TEXT),
      createdAt: expect.stringMatching(ISO_MS),
    });

    const res = await t.api('/api-keys');
    const text = await res.clone().text();
    expect(text).not.toContain(created.key);
    const { data } = await expectJson<{ data: ListedKey[] }>(res, 200);
    for (const item of data) expect(Object.keys(item).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name', 'scopes', 'storeId']);
    const { key: _key, ...listed } = created;
    expect(data).toContainEqual({ ...listed, lastUsedAt: null });
    expect(data.map((item) => item.id)).toContain('key_bootstrap');
  });

  it('stores only the SHA-256 hash of the key text', async () => {
    const created = await expectJson<CreatedKey>(await create({ name: 'hashed', scopes: ['webhooks:read'] }), 201);
    const [row] = await t.db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE id = $1', [created.id]);
    expect(row.key_hash).toBe(sha256(created.key));
    expect(await rowsContaining(t.db, created.key)).toBe(0);
    expect(await rowsContaining(t.db, created.key.slice('hlk_'.length))).toBe(0);
    // The bootstrap key (ADMIN_API_KEY) too.
    const [bootstrap] = await t.db.query<{ key_hash: string }>(`SELECT key_hash FROM api_keys WHERE id = 'key_bootstrap'`);
    expect(bootstrap.key_hash).toBe(sha256(ADMIN_KEY));
    expect(await rowsContaining(t.db, ADMIN_KEY)).toBe(0);
  });

  it('gives every key different text', async () => {
    const a = await expectJson<CreatedKey>(await create({ name: 'a', scopes: ['webhooks:read'] }), 201);
    const b = await expectJson<CreatedKey>(await create({ name: 'a', scopes: ['webhooks:read'] }), 201);
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
  });

  it('works as an API key with the scopes it was given', async () => {
    const { key } = await expectJson<CreatedKey>(await create({ name: 'reader', scopes: ['webhooks:read'] }), 201);
    await expectJson(await t.api('/webhooks', { key }), 200);
    await expectError(await t.api('/api-keys', { key }), 403, 'This API key lacks the scope api-keys:write');
  });

  it('records lastUsedAt once the key is used', async () => {
    const created = await expectJson<CreatedKey>(await create({ name: 'used', scopes: ['webhooks:read'] }), 201);
    expect((await list()).find((item) => item.id === created.id)!.lastUsedAt).toBeNull();
    const usedAt = Date.now();
    await expectJson(await t.api('/event-types', { key: created.key }), 200);
    const listed = await eventually(
      async () => (await list()).find((item) => item.id === created.id)!,
      (item) => item.lastUsedAt !== null,
      { what: 'lastUsedAt set' },
    );
    expect(listed.lastUsedAt).toMatch(ISO_MS);
    expect(Date.parse(listed.lastUsedAt!)).toBeGreaterThanOrEqual(Date.parse(created.createdAt));
    expect(Math.abs(Date.parse(listed.lastUsedAt!) - usedAt)).toBeLessThan(10_000);
  });

  it('revokes a key with 204; it stops working at once, even right after use', async () => {
    const created = await expectJson<CreatedKey>(await create({ name: 'doomed', scopes: ['webhooks:read'] }), 201);
    await expectJson(await t.api('/webhooks', { key: created.key }), 200);
    await expectJson(await t.api('/webhooks', { key: created.key }), 200);

    const res = await t.api(`/api-keys/${created.id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    await expectError(await t.api('/webhooks', { key: created.key }), 401, 'Invalid API key');
    expect(await t.db.query('SELECT id FROM api_keys WHERE id = $1', [created.id])).toEqual([]);
    expect((await list()).map((item) => item.id)).not.toContain(created.id);
    await expectError(await t.api(`/api-keys/${created.id}`, { method: 'DELETE' }), 404, `API key ${created.id} not found`);
  });

  it('revokes a key in every process sharing the database', async () => {
    const other = await startApp({ db: t.db });
    try {
      const created = await expectJson<CreatedKey>(await create({ name: 'shared', scopes: ['webhooks:read'] }), 201);
      await expectJson(await other.api('/webhooks', { key: created.key }), 200); // now cached there
      expect((await t.api(`/api-keys/${created.id}`, { method: 'DELETE' })).status).toBe(204);
      const status = await eventually(
        async () => (await other.api('/webhooks', { key: created.key })).status,
        (s) => s === 401,
        { deadlineMs: 2_000, what: 'revocation seen by the other process' },
      );
      expect(status).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('lets a key revoke itself', async () => {
    const created = await expectJson<CreatedKey>(await create({ name: 'self', scopes: ['api-keys:write'] }), 201);
    expect((await t.api(`/api-keys/${created.id}`, { method: 'DELETE', key: created.key })).status).toBe(204);
    await expectError(await t.api('/api-keys', { key: created.key }), 401);
  });

  it.each(['key_00000000000000000000000000', 'key_nope', 'wh_00000000000000000000000000'])(
    'answers 404 for revoking the unknown id %s',
    async (id) => {
      const before = await rowCounts(t.db);
      await expectError(await t.api(`/api-keys/${id}`, { method: 'DELETE' }), 404, `API key ${id} not found`);
      expect(await rowCounts(t.db)).toEqual(before);
    },
  );

  describe('a key can grant only scopes it holds', () => {
    let storeAdmin: CreatedKey;

    beforeAll(async () => {
      storeAdmin = await expectJson<CreatedKey>(await create({ name: 'store admin', scopes: ['api-keys:write', 'webhooks:read'] }), 201);
    });

    it.each<[string[], string]>([
      [['webhooks:write'], 'webhooks:write'],
      [['webhooks:read', 'events:write'], 'events:write'],
      [['stores:write'], 'stores:write'],
      [['webhooks:read', 'webhooks:write', 'stores:write'], 'webhooks:write, stores:write'],
    ])('refuses to grant %j with 403 and stores nothing', async (scopes, lacks) => {
      const before = await rowCounts(t.db);
      await expectError(
        await create({ name: 'escalated', scopes }, storeAdmin.key),
        403,
        `A key can grant only scopes it holds itself; this key lacks ${lacks}`,
      );
      expect(await rowCounts(t.db)).toEqual(before);
    });

    it('grants scopes it holds', async () => {
      const created = await expectJson<CreatedKey>(await create({ name: 'subset', scopes: ['webhooks:read'] }, storeAdmin.key), 201);
      expect(created).toMatchObject({ scopes: ['webhooks:read'], storeId: 'st_default' });
      const same = await expectJson<CreatedKey>(
        await create({ name: 'same', scopes: ['api-keys:write', 'webhooks:read'] }, storeAdmin.key),
        201,
      );
      expect(same.scopes).toEqual(['api-keys:write', 'webhooks:read']);
    });
  });

  it.each<[string, unknown, string]>([
    ['name missing', { scopes: ['webhooks:read'] }, 'name is required'],
    ['name empty', { name: '', scopes: ['webhooks:read'] }, 'name must be 1 to 200 characters'],
    ['name of 201 characters', { name: 'k'.repeat(201), scopes: ['webhooks:read'] }, 'name must be 1 to 200 characters'],
    ['name a number', { name: 5, scopes: ['webhooks:read'] }, 'name must be a string'],
    ['scopes missing', { name: 'k' }, 'scopes is required'],
    ['scopes a string', { name: 'k', scopes: 'webhooks:read' }, 'scopes must be an array of scopes'],
    ['scopes empty', { name: 'k', scopes: [] }, 'scopes must name at least one scope'],
    ['an unknown scope', { name: 'k', scopes: ['webhooks:admin'] }, `each scope must be one of: ${SCOPES.join(', ')}`],
    ['a repeated scope', { name: 'k', scopes: ['webhooks:read', 'webhooks:read'] }, 'scopes must not repeat a scope'],
    ['an unknown field', { name: 'k', scopes: ['webhooks:read'], storeId: 'st_other' }, 'property storeId should not exist'],
    ['a key text of its own', { name: 'k', scopes: ['webhooks:read'], key: 'hlk_mine' }, 'property key should not exist'],
  ])('refuses %s with 400 and stores nothing', async (_case, json, message) => {
    const before = await rowCounts(t.db);
    await expectError(await create(json), 400, message);
    expect(await rowCounts(t.db)).toEqual(before);
  });

  it('refuses malformed JSON with 400 and stores nothing', async () => {
    const before = await rowCounts(t.db);
    await expectError(
      await t.api('/api-keys', { method: 'POST', body: '{"name":"k",', headers: { 'Content-Type': 'application/json' } }),
      400,
      'Malformed JSON in request body',
    );
    expect(await rowCounts(t.db)).toEqual(before);
  });
});

describe('stores (POST/GET /stores, POST /stores/:id/api-keys)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  async function createStore(name: string): Promise<{ id: string; name: string; createdAt: string }> {
    return expectJson(await t.api('/stores', { method: 'POST', json: { name } }), 201);
  }

  it('creates a store', async () => {
    const store = await createStore('Acme Outdoor');
    expect(Object.keys(store).sort()).toEqual(['createdAt', 'id', 'name']);
    expect(store).toEqual({ id: expect.stringMatching(idOf('st')), name: 'Acme Outdoor', createdAt: expect.stringMatching(ISO_MS) });
    expect(await t.db.query('SELECT id, name FROM stores WHERE id = $1', [store.id])).toEqual([{ id: store.id, name: 'Acme Outdoor' }]);
  });

  it.each<[string, unknown, string]>([
    ['name missing', {}, 'name is required'],
    ['name empty', { name: '' }, 'name must be 1 to 200 characters'],
    ['name of 201 characters', { name: 's'.repeat(201) }, 'name must be 1 to 200 characters'],
    ['name a number', { name: 7 }, 'name must be a string'],
    ['an unknown field', { name: 's', id: 'st_mine' }, 'property id should not exist'],
  ])('refuses %s with 400 and stores nothing', async (_case, json, message) => {
    const before = await rowCounts(t.db);
    await expectError(await t.api('/stores', { method: 'POST', json }), 400, message);
    expect(await rowCounts(t.db)).toEqual(before);
  });

  it('lists every store across pages; nextCursor is null on the last page', async () => {
    for (let i = 0; i < 5; i++) await createStore(`listed ${i}`);
    const everything = await expectJson<{ data: Array<{ id: string }>; nextCursor: string | null }>(await t.api('/stores?limit=200'), 200);
    expect(everything.nextCursor).toBeNull();
    const expected = (await t.db.query<{ id: string }>('SELECT id FROM stores ORDER BY id DESC')).map((row) => row.id);
    expect(everything.data.map((store) => store.id)).toEqual(expected);
    expect(expected).toContain('st_default');
    for (const store of everything.data) expect(Object.keys(store).sort()).toEqual(['createdAt', 'id', 'name']);

    const { pages, cursors } = await allPages<{ id: string }>(t, '/stores?limit=2');
    expect(pages.flat().map((store) => store.id)).toEqual(expected);
    expect(pages.slice(0, -1).every((page) => page.length === 2)).toBe(true);
    expect(cursors[cursors.length - 1]).toBeNull();

    const first = await expectJson<{ data: unknown[]; nextCursor: string | null }>(await t.api('/stores'), 200);
    expect(first.data).toHaveLength(expected.length); // default limit 50
  });

  it.each<[string, string]>([
    ['limit=0', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['limit=201', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['limit=abc', 'limit must be an integer from 1 to 200 in plain decimal digits'],
    ['cursor=bogus', 'cursor is invalid; pass the nextCursor of a previous page'],
  ])('refuses the query %s with 400', async (query, message) => {
    await expectError(await t.api(`/stores?${query}`), 400, message);
  });

  it('creates a key in another store; it works there and only there', async () => {
    const store = await createStore('Key target');
    const res = await t.api(`/stores/${store.id}/api-keys`, {
      method: 'POST',
      json: { name: 'their admin', scopes: ['api-keys:write', 'webhooks:read'] },
    });
    const created = await expectJson<CreatedKey>(res, 201);
    expect(Object.keys(created).sort()).toEqual(['createdAt', 'id', 'key', 'name', 'scopes', 'storeId']);
    expect(created).toEqual({
      id: expect.stringMatching(idOf('key')),
      name: 'their admin',
      scopes: ['api-keys:write', 'webhooks:read'],
      storeId: store.id,
      key: expect.stringMatching(KEY_TEXT),
      createdAt: expect.stringMatching(ISO_MS),
    });
    const [row] = await t.db.query('SELECT store_id, key_hash FROM api_keys WHERE id = $1', [created.id]);
    expect(row).toEqual({ store_id: store.id, key_hash: sha256(created.key) });

    const theirs = await expectJson<{ data: ListedKey[] }>(await t.api('/api-keys', { key: created.key }), 200);
    expect(theirs.data.map((key) => key.id)).toEqual([created.id]);
    const ours = await expectJson<{ data: ListedKey[] }>(await t.api('/api-keys'), 200);
    expect(ours.data.map((key) => key.id)).not.toContain(created.id);
    expect(ours.data.every((key) => key.storeId === 'st_default')).toBe(true);
  });

  it('answers 404 for an unknown store and stores nothing', async () => {
    const before = await rowCounts(t.db);
    await expectError(
      await t.api('/stores/st_00000000000000000000000000/api-keys', { method: 'POST', json: { name: 'k', scopes: ['webhooks:read'] } }),
      404,
      'Store st_00000000000000000000000000 not found',
    );
    await expectError(
      await t.api('/stores/nope/api-keys', { method: 'POST', json: { name: 'k', scopes: ['webhooks:read'] } }),
      404,
      'Store nope not found',
    );
    expect(await rowCounts(t.db)).toEqual(before);
  });

  it('validates the key body as POST /api-keys does', async () => {
    const store = await createStore('Validated');
    const before = await rowCounts(t.db);
    await expectError(await t.api(`/stores/${store.id}/api-keys`, { method: 'POST', json: { name: 'k', scopes: [] } }), 400);
    await expectError(await t.api(`/stores/${store.id}/api-keys`, { method: 'POST', json: { name: 'k', scopes: ['root'] } }), 400);
    await expectError(await t.api(`/stores/${store.id}/api-keys`, { method: 'POST', json: { scopes: ['webhooks:read'] } }), 400);
    expect(await rowCounts(t.db)).toEqual(before);
  });

  it('grants only scopes the platform key holds itself', async () => {
    const store = await createStore('Limited');
    const { key: platform } = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: 'platform, narrow', scopes: ['stores:write', 'webhooks:read'] } }),
      201,
    );
    const before = await rowCounts(t.db);
    await expectError(
      await t.api(`/stores/${store.id}/api-keys`, { method: 'POST', json: { name: 'k', scopes: ['webhooks:write'] }, key: platform }),
      403,
      'A key can grant only scopes it holds itself; this key lacks webhooks:write',
    );
    expect(await rowCounts(t.db)).toEqual(before);
    const ok = await expectJson<CreatedKey>(
      await t.api(`/stores/${store.id}/api-keys`, { method: 'POST', json: { name: 'k', scopes: ['webhooks:read'] }, key: platform }),
      201,
    );
    expect(ok.storeId).toBe(store.id);
  });
});

describe('who am I (GET /me)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it("answers the calling key's id, name, store and scopes", async () => {
    const me = await expectJson<Record<string, unknown>>(await t.api('/me'), 200);
    expect(me).toEqual({ id: 'key_bootstrap', name: 'bootstrap (ADMIN_API_KEY)', storeId: 'st_default', scopes: [...SCOPES] });
  });

  it.each<[string, Scope[]]>([
    ['only events:write', ['events:write']],
    ['only webhooks:read', ['webhooks:read']],
    ['webhooks:read and webhooks:write', ['webhooks:read', 'webhooks:write']],
  ])('answers a key holding %s (no scope is needed), and changes nothing', async (_case, scopes) => {
    const created = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: `me ${scopes.join(' ')}`, scopes } }),
      201,
    );
    const before = await rowCounts(t.db);
    const me = await expectJson<Record<string, unknown>>(await t.api('/me', { key: created.key }), 200);
    expect(me).toEqual({ id: created.id, name: created.name, storeId: 'st_default', scopes });
    expect(await rowCounts(t.db)).toEqual(before);
  });

  it("answers a key of another store with that store's id", async () => {
    const { storeId, key } = await createStoreWithKey(t, 'Who am I', ['webhooks:read']);
    expect(await expectJson(await t.api('/me', { key: key.key }), 200)).toEqual({
      id: key.id,
      name: 'Who am I key',
      storeId,
      scopes: ['webhooks:read'],
    });
  });

  it('answers 401 without a key, with an unknown key and with a revoked one', async () => {
    await expectError(await t.api('/me', { key: null }), 401, 'Missing X-API-Key header');
    await expectError(await t.api('/me', { key: 'hlk_not_a_key_that_exists_0000000000000000000' }), 401, 'Invalid API key');
    const revoked = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: 'gone', scopes: ['webhooks:read'] } }),
      201,
    );
    expect((await t.api('/me', { key: revoked.key })).status).toBe(200);
    expect((await t.api(`/api-keys/${revoked.id}`, { method: 'DELETE' })).status).toBe(204);
    await expectError(await t.api('/me', { key: revoked.key }), 401, 'Invalid API key');
  });

  it('is documented in the OpenAPI document: an API key of any scope, its answer and a 401 (never a 403)', async () => {
    type Operation = {
      security?: unknown;
      description?: string;
      'x-required-scopes'?: unknown;
      responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
    };
    const document = await expectJson<{
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, { properties: object }> };
    }>(await fetch(`${t.baseUrl}/docs-json`), 200);
    const operation = document.paths['/me']?.get;
    expect(operation).toMatchObject({ security: [{ 'api-key': [] }, { 'portal-session': [] }], 'x-required-scopes': [] });
    expect(operation.description).toContain('Requires an API key, of any scope (or a portal session’s token).');
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '401', '429']);
    const ref = operation.responses['200'].content?.['application/json'].schema.$ref ?? '';
    expect(Object.keys(document.components.schemas[ref.split('/').pop()!].properties).sort()).toEqual([
      'id',
      'name',
      'portalSession',
      'scopes',
      'storeId',
    ]);
  });
});

describe('unknown routes and the error shape', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it.each<[string, string]>([
    ['GET', '/nope'],
    ['GET', '/webhooks/wh_00000000000000000000000000/nope'],
    ['PATCH', '/webhooks/wh_00000000000000000000000000'],
    ['POST', '/webhooks/wh_00000000000000000000000000'],
    ['PUT', '/webhooks'],
    ['DELETE', '/webhooks'],
    ['GET', '/stores/st_default'],
    ['GET', '/api-keys/key_bootstrap'],
    ['GET', '/v2/webhooks'],
  ])('answers %s %s with 404 in the error shape, with or without a key', async (method, path) => {
    await expectError(await t.api(path, { method }), 404, `Cannot ${method} /api/v1/external${path}`);
    await expectError(await t.api(path, { method, key: null }), 404);
  });

  it('answers a path outside the API prefix with 404 in the error shape', async () => {
    await expectError(await fetch(`${t.baseUrl}/webhooks`), 404);
  });

  it.each<[string, string, string]>([
    ['GET', '/webhooks/wh_00000000000000000000000000', 'Webhook wh_00000000000000000000000000 not found'],
    ['GET', '/events/evt_00000000000000000000000000', 'Event evt_00000000000000000000000000 not found'],
    ['DELETE', '/api-keys/key_00000000000000000000000000', 'API key key_00000000000000000000000000 not found'],
  ])('answers %s %s (an unknown id) with 404 naming it', async (method, path, message) => {
    await expectError(await t.api(path, { method }), 404, message);
  });
});

describe('the OpenAPI document (/docs-json)', () => {
  type Operation = { security?: unknown; responses: Record<string, unknown>; requestBody?: unknown; tags?: string[]; description?: string };
  let t: TestApp;
  let document: OpenAPIObject & { paths: Record<string, Record<string, Operation>> };

  beforeAll(async () => {
    t = await startApp();
    const res = await fetch(`${t.baseUrl}/docs-json`);
    document = await expectJson(res, 200);
  });

  afterAll(async () => {
    await t?.close();
  });

  const operations = (): Array<[string, Operation]> =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]),
    );

  it('is the document that `npm run openapi` writes without a database, which `npm run lint` lints', async () => {
    expect(document).toEqual(await previewOpenApiDocument(t.config));
  });

  it.each(ROUTES.map((route) => [label(route), route] as const))('documents %s with its scope and its 401/403 answers', (_label, route) => {
    const path = route.path
      .replace(/:(\w+)/g, '{id}')
      .replace(/\/(evt|del)_0+/, '/{id}')
      .replace(/\/event-types\/order\.created$/, '/event-types/{type}')
      .replace(/\/\{id\}\/portal-sessions\/ps_0+/, '/{id}/portal-sessions/{sessionId}')
      .replace(/\/ps_0+/, '/{id}');
    const operation = document.paths[path]?.[route.method.toLowerCase()];
    expect({ path, found: operation !== undefined }).toEqual({ path, found: true });
    // A portal session's token is offered where a session can hold the scope (webhooks:read, webhooks:write).
    const bySession = route.scope.startsWith('webhooks:') ? [{ 'portal-session': [] }] : [];
    expect(operation.security).toEqual([{ 'api-key': [] }, ...bySession]);
    expect(operation).toMatchObject({ 'x-required-scopes': [route.scope] });
    expect(operation.description).toContain(`\`${route.scope}\``);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '403']));
  });

  it('documents no API operation without a security requirement, and only health and a portal link’s exchange as public', () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: '/api/v1/external' })]);
    const publicOnes = operations().filter(([, operation]) => !(operation.security as unknown[]).length);
    expect(publicOnes.map(([name]) => name)).toEqual(['GET /health', 'POST /portal-sessions/exchange']);
  });

  it('documents 413 on every operation that takes a body', () => {
    const withBody = operations().filter(([, operation]) => operation.requestBody);
    expect(withBody.length).toBeGreaterThanOrEqual(7);
    for (const [name, operation] of withBody) expect({ name, has413: '413' in operation.responses }).toEqual({ name, has413: true });
  });

  it('declares its tags, webhooks, events and deliveries before the administration groups, and lists health once', () => {
    expect(document.tags?.map((tag) => tag.name)).toEqual([
      'webhooks',
      'events',
      'deliveries',
      'api-keys',
      'stores',
      'portal-sessions',
      'health',
      'event-deliveries',
    ]);
    const declared = new Set(document.tags?.map((tag) => tag.name));
    for (const [name, operation] of operations())
      expect({ name, tags: operation.tags?.filter((tag) => !declared.has(tag)) }).toEqual({ name, tags: [] });
    expect(operations().filter(([name]) => name.endsWith('/health'))).toHaveLength(1);
  });

  it('tells receivers how a delivery is signed and verified', () => {
    const description = document.info.description ?? '';
    for (const header of ['X-Webhook-Signature', 'X-Webhook-Timestamp', 'X-Webhook-ID', 'User-Agent'])
      expect(description).toContain(`\`${header}\``);
    expect(description).toContain('HMAC-SHA256');
    expect(description).toMatch(/```js\n[\s\S]*timingSafeEqual/);
  });
});
