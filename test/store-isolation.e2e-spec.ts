import { SqlPool } from '../src/database/sql-pool';
import type { WebhookResponse } from '../src/webhooks/dto/webhook.response';
import { WebhookRepository, type WebhookFilter } from '../src/webhooks/webhook.repository';
import { ADMIN_KEY, startApp, TestApp } from './support/app';
import {
  allPages,
  CreatedKey,
  createStoreWithKey,
  createWebhook,
  expectError,
  expectJson,
  rowCounts,
  WebhookBody,
} from './support/expectations';
import { Receiver } from './support/receiver';

const ORDER = { id: 'ord_1', orderNumber: 'ORD-1', status: 'PENDING', total: 100, currency: 'EUR' };
const STORE_ADMIN_SCOPES = ['webhooks:read', 'webhooks:write', 'events:write', 'api-keys:write'];

/**
 * Two stores side by side: store A is st_default with the bootstrap key, which holds
 * every scope; store B is created through the API, with a key holding every scope but stores:write.
 * Neither key may see or change anything of the other store; another store's ids answer 404, never 403.
 */
describe('two stores side by side', () => {
  let t: TestApp;
  let receiver: Receiver;
  let storeB: string;
  let keyB: CreatedKey;
  let hooksA: WebhookBody[];
  let hooksB: WebhookBody[];
  let keyA2: CreatedKey;
  let testEventA: string;

  const A = ADMIN_KEY;
  const B = () => keyB.key;

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp();
    ({ storeId: storeB, key: keyB } = await createStoreWithKey(t, 'Store B', STORE_ADMIN_SCOPES));
    hooksA = [];
    hooksB = [];
    for (let i = 0; i < 4; i++) {
      hooksA.push(await createWebhook(t, { name: `A ${i}`, url: `${receiver.url}/a${i}`, isActive: i !== 3 }, A));
      hooksB.push(await createWebhook(t, { name: `B ${i}`, url: `${receiver.url}/b${i}`, isActive: i !== 3 }, B()));
    }
    keyA2 = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: 'A reader', scopes: ['webhooks:read'] } }),
      201,
    );
    const tested = await expectJson<{ eventId: string }>(await t.api(`/webhooks/${hooksA[0].id}/test`, { method: 'POST' }), 200);
    testEventA = tested.eventId;
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('gives store B its own id and its key that store', async () => {
    expect(storeB).not.toBe('st_default');
    expect(keyB.storeId).toBe(storeB);
    const rows = await t.db.query<{ id: string; store_id: string }>('SELECT id, store_id FROM webhooks ORDER BY id');
    for (const hook of hooksA) expect(rows).toContainEqual({ id: hook.id, store_id: 'st_default' });
    for (const hook of hooksB) expect(rows).toContainEqual({ id: hook.id, store_id: storeB });
  });

  describe.each<[string, () => string, () => WebhookBody[]]>([
    ["store B's key on store A's webhooks", B, () => hooksA],
    ["store A's key on store B's webhooks", () => A, () => hooksB],
  ])('%s', (_case, key, others) => {
    const snapshot = () => t.db.query('SELECT * FROM webhooks ORDER BY id');

    it('never lists them, on any page or with any filter', async () => {
      const otherIds = others().map((hook) => hook.id);
      for (const query of ['', '?limit=1', '?isActive=true', '?isActive=false', '?event=order.created']) {
        const { pages } = await allPages<WebhookBody>(t, `/webhooks${query}`, key());
        const seen = pages.flat().map((hook) => hook.id);
        expect(seen.filter((id) => otherIds.includes(id))).toEqual([]);
      }
      const own = (await allPages<WebhookBody>(t, '/webhooks', key())).pages.flat();
      expect(own).toHaveLength(4);
    });

    it('answers GET with 404', async () => {
      for (const hook of others())
        await expectError(await t.api(`/webhooks/${hook.id}`, { key: key() }), 404, `Webhook ${hook.id} not found`);
    });

    it('answers PUT with 404 and changes nothing, whatever the body asks', async () => {
      const before = await snapshot();
      for (const hook of others()) {
        const json = { name: 'hijacked', url: `${receiver.url}/stolen`, events: ['payment.received'], isActive: true };
        await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json, key: key() }), 404, `Webhook ${hook.id} not found`);
        await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { isActive: false }, key: key() }), 404);
      }
      expect(await snapshot()).toEqual(before);
    });

    it('answers rotate-secret with 404 and keeps the secret', async () => {
      const before = await snapshot();
      for (const hook of others()) {
        const res = await t.api(`/webhooks/${hook.id}/rotate-secret`, { method: 'POST', key: key() });
        const text = await res.clone().text();
        await expectError(res, 404, `Webhook ${hook.id} not found`);
        expect(text).not.toContain('whsec_');
      }
      expect(await snapshot()).toEqual(before);
    });

    it('answers test with 404, sends nothing and records nothing', async () => {
      const before = await rowCounts(t.db);
      const sent = receiver.requests.length;
      for (const hook of others()) {
        await expectError(await t.api(`/webhooks/${hook.id}/test`, { method: 'POST', key: key() }), 404, `Webhook ${hook.id} not found`);
      }
      expect(await rowCounts(t.db)).toEqual(before);
      expect(receiver.requests.length).toBe(sent);
    });

    it('answers the delivery log, retry-failed and replay with 404', async () => {
      const before = await rowCounts(t.db);
      for (const hook of others()) {
        await expectError(await t.api(`/webhooks/${hook.id}/deliveries`, { key: key() }), 404);
        await expectError(await t.api(`/webhooks/${hook.id}/deliveries/retry-failed`, { method: 'POST', json: {}, key: key() }), 404);
        const since = '2026-01-01T00:00:00.000Z';
        await expectError(await t.api(`/webhooks/${hook.id}/replay`, { method: 'POST', json: { since }, key: key() }), 404);
      }
      expect(await rowCounts(t.db)).toEqual(before);
    });

    it('answers DELETE with 404 and deletes nothing', async () => {
      const before = await snapshot();
      for (const hook of others()) {
        await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'DELETE', key: key() }), 404, `Webhook ${hook.id} not found`);
      }
      expect(await snapshot()).toEqual(before);
    });
  });

  it("does not let a cursor of one store page into the other's webhooks", async () => {
    const idsA = hooksA.map((hook) => hook.id);
    const idsB = hooksB.map((hook) => hook.id);
    // Cursors taken at every position of A's list, replayed by B (and the other way round).
    const cursorsA = (await allPages<WebhookBody>(t, '/webhooks?limit=1', A)).cursors.filter((c): c is string => c !== null);
    const cursorsB = (await allPages<WebhookBody>(t, '/webhooks?limit=1', B())).cursors.filter((c): c is string => c !== null);
    expect(cursorsA.length).toBeGreaterThan(0);
    for (const cursor of cursorsA) {
      const page = await expectJson<{ data: WebhookBody[] }>(
        await t.api(`/webhooks?limit=200&cursor=${encodeURIComponent(cursor)}`, { key: B() }),
        200,
      );
      expect(page.data.map((hook) => hook.id).filter((id) => !idsB.includes(id))).toEqual([]);
    }
    for (const cursor of cursorsB) {
      const page = await expectJson<{ data: WebhookBody[] }>(
        await t.api(`/webhooks?limit=200&cursor=${encodeURIComponent(cursor)}`, { key: A }),
        200,
      );
      expect(page.data.map((hook) => hook.id).filter((id) => idsB.includes(id))).toEqual([]);
      expect(page.data.every((hook) => idsA.includes(hook.id))).toBe(true);
    }
    // A forged cursor just above every id still shows only the caller's own endpoints.
    const forged = Buffer.from(JSON.stringify({ after: 'wh_zzzzzzzzzzzzzzzzzzzzzzzzzz' })).toString('base64url');
    const page = await expectJson<{ data: WebhookBody[] }>(await t.api(`/webhooks?limit=200&cursor=${forged}`, { key: B() }), 200);
    expect(page.data.map((hook) => hook.id).sort()).toEqual([...idsB].sort());
  });

  it("answers list reads of both stores that arrive together in shared statements, each with only its own store's rows", async () => {
    const repository = t.app.get(WebhookRepository);
    const reads: Array<[string, WebhookFilter]> = [];
    for (const storeId of ['st_default', storeB]) {
      for (const limit of [1, 2, 10]) reads.push([storeId, { limit }]);
      reads.push([storeId, { limit: 10, isActive: false }], [storeId, { limit: 10, event: 'order.created' }]);
      reads.push([storeId, { limit: 10, event: 'stock.low' }], [storeId, { limit: 10, beforeId: hooksA[2].id }]);
      reads.push([storeId, { limit: 10, beforeId: hooksB[2].id }]);
    }
    const alone: WebhookResponse[][] = [];
    for (const [storeId, filter] of reads) alone.push(await repository.page(storeId, filter));
    expect(alone.flat().length).toBeGreaterThan(reads.length);

    const pool = t.app.get(SqlPool);
    const statements = jest.spyOn(pool, 'query');
    try {
      const together = await Promise.all([...reads, ...reads].map(([storeId, filter]) => repository.page(storeId, filter)));
      expect(together).toEqual([...alone, ...alone]);
      expect(statements.mock.calls.length).toBeLessThan(reads.length);
    } finally {
      statements.mockRestore();
    }
    const owner = new Map<string, string>([
      ...hooksA.map((hook) => [hook.id, 'st_default'] as const),
      ...hooksB.map((hook) => [hook.id, storeB] as const),
    ]);
    reads.forEach(([storeId], i) => expect(alone[i].map((hook) => owner.get(hook.id)).filter((store) => store !== storeId)).toEqual([]));
  });

  it("keeps API keys apart: each store lists only its own, and cannot revoke the other's", async () => {
    const listA = await expectJson<{ data: Array<{ id: string; storeId: string }> }>(await t.api('/api-keys', { key: A }), 200);
    const listB = await expectJson<{ data: Array<{ id: string; storeId: string }> }>(await t.api('/api-keys', { key: B() }), 200);
    expect(listB.data.map((key) => key.id)).toEqual([keyB.id]);
    expect(listA.data.every((key) => key.storeId === 'st_default')).toBe(true);
    expect(listA.data.map((key) => key.id)).toEqual(expect.arrayContaining(['key_bootstrap', keyA2.id]));
    expect(listA.data.map((key) => key.id)).not.toContain(keyB.id);

    const before = await rowCounts(t.db);
    for (const id of ['key_bootstrap', keyA2.id]) {
      await expectError(await t.api(`/api-keys/${id}`, { method: 'DELETE', key: B() }), 404, `API key ${id} not found`);
    }
    await expectError(await t.api(`/api-keys/${keyB.id}`, { method: 'DELETE', key: A }), 404, `API key ${keyB.id} not found`);
    expect(await rowCounts(t.db)).toEqual(before);
    await expectJson(await t.api('/webhooks', { key: keyA2.key }), 200);
    await expectJson(await t.api('/webhooks', { key: B() }), 200);
  });

  it("creates store B's new keys in store B, whatever the body says", async () => {
    const created = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: 'B reader', scopes: ['webhooks:read'] }, key: B() }),
      201,
    );
    expect(created.storeId).toBe(storeB);
    await expectError(
      await t.api('/api-keys', { method: 'POST', json: { name: 'x', scopes: ['webhooks:read'], storeId: 'st_default' }, key: B() }),
      400,
      'property storeId should not exist',
    );
    const reader = await expectJson<{ data: WebhookBody[] }>(await t.api('/webhooks', { key: created.key }), 200);
    expect(reader.data.map((hook) => hook.id).sort()).toEqual(hooksB.map((hook) => hook.id).sort());
  });

  it("gives a store administrator no way into the platform's store routes", async () => {
    const before = await rowCounts(t.db);
    await expectError(await t.api('/stores', { key: B() }), 403, 'This API key lacks the scope stores:write');
    await expectError(
      await t.api('/stores/st_default/api-keys', { method: 'POST', json: { name: 'x', scopes: ['webhooks:read'] }, key: B() }),
      403,
    );
    await expectError(
      await t.api('/api-keys', { method: 'POST', json: { name: 'x', scopes: ['stores:write'] }, key: B() }),
      403,
      'A key can grant only scopes it holds itself; this key lacks stores:write',
    );
    expect(await rowCounts(t.db)).toEqual(before);
  });

  it("does not show one store's events to the other", async () => {
    await expectError(await t.api(`/events/${testEventA}`, { key: B() }), 404, `Event ${testEventA} not found`);
    await expectJson(await t.api(`/events/${testEventA}`, { key: A }), 200);
  });

  it("fans an event out only to the publishing store's active subscribed endpoints", async () => {
    const published = await expectJson<{ id: string; deliveries: number }>(
      await t.api('/events', { method: 'POST', json: { type: 'order.created', data: ORDER }, key: B() }),
      202,
    );
    expect(published.deliveries).toBe(3);
    const rows = await t.db.query<{ webhook_id: string; store_id: string }>(
      'SELECT webhook_id, store_id FROM deliveries WHERE event_id = $1',
      [published.id],
    );
    expect(rows.map((row) => row.webhook_id).sort()).toEqual(
      hooksB
        .slice(0, 3)
        .map((hook) => hook.id)
        .sort(),
    );
    expect(rows.every((row) => row.store_id === storeB)).toBe(true);
    await expectError(await t.api(`/events/${published.id}`, { key: A }), 404);
  });

  it('still shows each store all of its own webhooks, unchanged', async () => {
    for (const [key, hooks] of [
      [A, hooksA],
      [B(), hooksB],
    ] as const) {
      for (const hook of hooks) {
        const { secret: _secret, ...resource } = hook;
        expect(await expectJson(await t.api(`/webhooks/${hook.id}`, { key }), 200)).toEqual(resource);
      }
    }
  });
});
