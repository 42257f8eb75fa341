import fc from 'fast-check';
import { encodeCursor } from '../src/common/pagination';
import { ADMIN_KEY, startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createStoreWithKey, expectJson } from './support/expectations';
import { createWebhook, orderData, publish } from './support/fixtures';
import { LastRun } from './support/property-runs';
import { Receiver } from './support/receiver';

/**
 * Store isolation as a property: four stores (st_default and
 * three created through the API) with endpoints, events, deliveries and keys each. fast-check
 * picks a store's key and another store's ids, filters and cursors, and tries every route with
 * them. Always 404 (403 on the platform routes, which need stores:write whatever the id) or a page
 * of the caller's own rows; never a word of another store in a body or a header; never a change
 * to another store's rows. And no event of one store ever reaches an endpoint of another.
 */

const RUNS = Number(process.env.ISOLATION_RUNS ?? 1_500);
const TIME_LIMIT_MS = Number(process.env.ISOLATION_TIME_LIMIT_MS ?? 20_000);
const STORE_ADMIN_SCOPES = ['webhooks:read', 'webhooks:write', 'events:write', 'api-keys:write'];
const EVENT_TYPES = ['order.created', 'order.updated', 'order.completed', 'payment.received', 'webhook.test'];

type Kind = 'wh' | 'evt' | 'del' | 'key';

interface StoreFixture {
  id: string;
  key: string;
  ids: Record<Kind, string[]>;
  /** Everything that identifies this store's data: ids, names, URLs, key texts, order numbers. */
  markers: string[];
  idempotencyKey: string;
  /** The event first published with that key: a repeat must send it again to be a replay (another body is a 422). */
  idempotentEvent?: { type: string; data: unknown };
}

/** Every route that takes an id, a filter or a cursor, and what it may answer to a foreign one. */
const ROUTES: Array<{ method: string; path: string; kind?: Kind; body?: unknown; list?: boolean }> = [
  { method: 'GET', path: '/webhooks/:id', kind: 'wh' },
  { method: 'PUT', path: '/webhooks/:id', kind: 'wh', body: { name: 'hijacked', isActive: false, events: ['payment.received'] } },
  { method: 'DELETE', path: '/webhooks/:id', kind: 'wh' },
  { method: 'POST', path: '/webhooks/:id/test', kind: 'wh' },
  { method: 'POST', path: '/webhooks/:id/rotate-secret', kind: 'wh' },
  { method: 'GET', path: '/webhooks/:id/deliveries', kind: 'wh', list: true },
  { method: 'POST', path: '/webhooks/:id/deliveries/retry-failed', kind: 'wh', body: {} },
  { method: 'POST', path: '/webhooks/:id/replay', kind: 'wh', body: { since: '2026-01-01T00:00:00.000Z' } },
  { method: 'GET', path: '/deliveries/:id', kind: 'del' },
  { method: 'POST', path: '/deliveries/:id/retry', kind: 'del' },
  { method: 'GET', path: '/events/:id', kind: 'evt' },
  { method: 'DELETE', path: '/api-keys/:id', kind: 'key' },
  { method: 'POST', path: '/stores/:id/api-keys', body: { name: 'intruder', scopes: ['webhooks:read'] } },
  { method: 'GET', path: '/webhooks', list: true },
  { method: 'GET', path: '/api-keys', list: true },
  { method: 'GET', path: '/stores', list: true },
  { method: 'POST', path: '/events' },
];

describe('store isolation, as a property', () => {
  let t: TestApp;
  let receiver: Receiver;
  const stores: StoreFixture[] = [];
  const stats = { requests: 0, byStatus: {} as Record<number, number>, ms: 0, deliveriesChecked: 0 };

  beforeAll(async () => {
    receiver = await Receiver.start();
    receiver.respondWith((request, res) => res.writeHead(request.path.endsWith('/fail') ? 500 : 200).end());
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0', RATE_LIMIT_PER_MINUTE: '0' } });

    const keys: Array<{ id: string; key: string; storeId: string }> = [{ id: 'key_bootstrap', key: ADMIN_KEY, storeId: 'st_default' }];
    for (const name of ['Store One', 'Store Two', 'Store Three']) {
      const { storeId, key } = await createStoreWithKey(t, name, STORE_ADMIN_SCOPES);
      keys.push({ id: key.id, key: key.key, storeId });
    }
    for (const { id: keyId, key, storeId } of keys) {
      const store: StoreFixture = {
        id: storeId,
        key,
        ids: { wh: [], evt: [], del: [], key: [keyId] },
        markers: [],
        idempotencyKey: `idem-${storeId}`,
      };
      for (const [i, tail] of ['ok', 'fail', 'off'].entries()) {
        const hook = await createWebhook(
          t,
          `${receiver.url}/${storeId}/${tail}`,
          ['order.created', 'order.updated'],
          { name: `hook ${tail} of ${storeId}`, isActive: i < 2 },
          key,
        );
        store.ids.wh.push(hook.id);
        store.markers.push(hook.id, `hook ${tail} of ${storeId}`, hook.url, hook.secret);
        const tested = await expectJson<{ eventId: string; deliveryId: string }>(
          await t.api(`/webhooks/${hook.id}/test`, { method: 'POST', key }),
          200,
        );
        store.ids.evt.push(tested.eventId);
        store.ids.del.push(tested.deliveryId);
      }
      for (let n = 0; n < 2; n++) {
        const data = { ...orderData(n), id: `ord_${storeId}_${n}`, orderNumber: `ORDER-OF-${storeId}-${n}` };
        const headers: Record<string, string> = n === 0 ? { 'Idempotency-Key': store.idempotencyKey } : {};
        const event = await publish(t, n === 0 ? 'order.created' : 'order.updated', data, headers, key);
        if (n === 0) store.idempotentEvent = { type: 'order.created', data };
        store.ids.evt.push(event.id);
        store.markers.push(data.id, data.orderNumber);
      }
      const extra = await expectJson<{ id: string; key: string; name: string }>(
        await t.api('/api-keys', { method: 'POST', json: { name: `reader of ${storeId}`, scopes: ['webhooks:read'] }, key }),
        201,
      );
      store.ids.key.push(extra.id);
      store.markers.push(storeId, keyId, key, extra.id, extra.key, extra.name);
      stores.push(store);
    }
    // Every delivery settled, so that the snapshots below move only if isolation breaks.
    await eventually(
      async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`))[0].n,
      (pending) => pending === 0,
      { what: 'every setup delivery to settle' },
    );
    for (const store of stores) {
      const rows = await t.db.query<{ id: string; event_id: string }>('SELECT id, event_id FROM deliveries WHERE store_id = $1', [
        store.id,
      ]);
      store.ids.del.push(...rows.map((row) => row.id).filter((id) => !store.ids.del.includes(id)));
      store.markers.push(...store.ids.evt, ...store.ids.del);
    }
  }, 60_000);

  afterAll(async () => {
    console.log(`[store-isolation-property] ${JSON.stringify(stats)}`);
    await t?.close();
    await receiver?.close();
  });

  /**
   * A fingerprint of each store's rows (api_keys without last_used_at, which requests touch). Each
   * table is read once, grouped by store: the log tables are partitioned by day, and a subquery per
   * store over every partition took 120 ms a snapshot.
   */
  async function snapshot(): Promise<Record<string, string>> {
    const rows = await t.db.query<{ id: string; rows: string }>(`
      SELECT s.id, s::text || coalesce(w.h, '') || coalesce(e.h, '') || coalesce(d.h, '') || coalesce(a.h, '') || coalesce(k.h, '') AS rows
      FROM stores s
      LEFT JOIN (SELECT store_id, md5(string_agg(w::text, '|' ORDER BY w.id)) AS h FROM webhooks w GROUP BY store_id) w ON w.store_id = s.id
      LEFT JOIN (SELECT store_id, md5(string_agg(e::text, '|' ORDER BY e.id)) AS h FROM events e GROUP BY store_id) e ON e.store_id = s.id
      LEFT JOIN (SELECT store_id, md5(string_agg(d::text, '|' ORDER BY d.id)) AS h FROM deliveries d GROUP BY store_id) d ON d.store_id = s.id
      LEFT JOIN (SELECT store_id, md5(string_agg(a::text, '|' ORDER BY a.delivery_id, a.number)) AS h FROM delivery_attempts a GROUP BY store_id) a
        ON a.store_id = s.id
      LEFT JOIN (SELECT store_id, md5(string_agg(row(k.id, k.name, k.scopes, k.key_hash)::text, '|' ORDER BY k.id)) AS h FROM api_keys k GROUP BY store_id) k
        ON k.store_id = s.id`);
    return Object.fromEntries(rows.map((row) => [row.id, row.rows]));
  }

  it(
    'never answers, shows or changes another store, whatever id, filter or cursor a key brings',
    async () => {
      // Actors: the three store administrators. st_default's bootstrap key also holds stores:write,
      // which legitimately reaches every store (platform administration), so it is only a target.
      const pair = fc
        .tuple(fc.integer({ min: 1, max: stores.length - 1 }), fc.nat(stores.length - 1))
        .filter(([actor, target]) => actor !== target);
      const request = fc.record({
        stores: pair,
        route: fc.constantFrom(...ROUTES),
        kind: fc.constantFrom<Kind>('wh', 'evt', 'del', 'key'),
        pick: fc.nat(),
        query: fc.record({
          limit: fc.option(fc.constantFrom('1', '2', '50', '200'), { nil: undefined }),
          isActive: fc.option(fc.constantFrom('true', 'false'), { nil: undefined }),
          event: fc.option(fc.constantFrom(...EVENT_TYPES), { nil: undefined }),
          status: fc.option(fc.constantFrom('pending', 'succeeded', 'failed'), { nil: undefined }),
          eventType: fc.option(fc.constantFrom(...EVENT_TYPES), { nil: undefined }),
          cursor: fc.option(fc.constantFrom('foreign', 'own'), { nil: undefined }),
        }),
        ownIdInPath: fc.boolean(),
        idempotency: fc.constantFrom('none', 'foreign', 'own'),
      });

      let before = await snapshot();
      const started = Date.now();
      const lastRun = new LastRun();
      await fc.assert(
        fc.asyncProperty(
          request,
          lastRun.keep(async (r) => {
            const actor = stores[r.stores[0]];
            const target = stores[r.stores[1]];
            const foreignIds = (kind: Kind) => target.ids[kind];
            const kind = r.route.kind ?? r.kind;
            const foreignId = foreignIds(kind)[r.pick % foreignIds(kind).length];
            // The id in the path: the other store's (or, for the delivery log, sometimes the caller's
            // own endpoint, so that the foreign cursor and filters meet a real list).
            const pathId =
              r.route.path === '/stores/:id/api-keys' ? target.id : r.ownIdInPath && r.route.list ? actor.ids.wh[0] : foreignId;
            const query = new URLSearchParams();
            for (const [name, value] of Object.entries(r.query)) {
              if (value === undefined) continue;
              if (name === 'cursor') query.set('cursor', encodeCursor(value === 'foreign' ? foreignId : actor.ids[kind][0]));
              else query.set(name, value);
            }
            const path = `${r.route.path.replace(':id', pathId)}${r.route.list ? `?${query.toString()}` : ''}`;
            const headers: Record<string, string> = {};
            if (r.idempotency !== 'none')
              headers['Idempotency-Key'] = r.idempotency === 'foreign' ? target.idempotencyKey : actor.idempotencyKey;
            let json = r.route.body;
            if (r.route.path === '/events') {
              json =
                r.idempotency === 'own'
                  ? actor.idempotentEvent
                  : { type: 'order.created', data: { ...orderData(1), orderNumber: `BY-${actor.id}` } };
            }

            const res = await t.api(path, { method: r.route.method, key: actor.key, json, headers });
            const text = await res.text();
            stats.requests++;
            stats.byStatus[res.status] = (stats.byStatus[res.status] ?? 0) + 1;
            const what = `${actor.id} → ${r.route.method} ${path} → ${res.status} ${text.slice(0, 200)}`;

            // The answer: 404 for the other store's ids, 403 for the platform routes (scope, whatever
            // the id), 400 for a filter the route does not take, or the caller's own page or action.
            const allowed = r.route.path.startsWith('/stores')
              ? [403]
              : r.route.path === '/events'
                ? [200, 202]
                : r.route.list && (pathId === actor.ids.wh[0] || !r.route.kind)
                  ? [200, 400]
                  : r.route.list
                    ? [400, 404]
                    : [404];
            expect({ what, allowed: allowed.includes(res.status) }).toEqual({ what, allowed: true });
            if (res.status === 200 && r.route.list) {
              const page = JSON.parse(text) as { data: Array<{ id: string }> };
              const table = { '/webhooks': 'webhooks', '/api-keys': 'api_keys' }[r.route.path] ?? 'deliveries';
              const own = (await t.db.query<{ id: string }>(`SELECT id FROM ${table} WHERE store_id = $1`, [actor.id])).map(
                (row) => row.id,
              );
              expect({ what, foreign: page.data.map((item) => item.id).filter((id) => !own.includes(id)) }).toEqual({ what, foreign: [] });
            }
            if (r.route.path === '/events') {
              const { id } = JSON.parse(text) as { id: string };
              const [row] = await t.db.query<{ store_id: string }>('SELECT store_id FROM events WHERE id = $1', [id]);
              expect({ what, store: row.store_id }).toEqual({ what, store: actor.id });
              actor.markers.push(id);
              // Its deliveries go out in the background: let them settle before the next snapshot.
              await eventually(
                async () =>
                  (
                    await t.db.query<{ n: number }>(
                      `SELECT count(*)::int AS n FROM deliveries WHERE event_id = $1 AND status = 'pending'`,
                      [id],
                    )
                  )[0].n,
                (pending) => pending === 0,
                { what: `the deliveries of ${id} to settle` },
              );
            }

            // No trace of any other store, except what the caller itself sent.
            const sent = `${path} ${JSON.stringify(json ?? '')} ${JSON.stringify(headers)}`;
            const seen = `${text} ${JSON.stringify([...res.headers])}`;
            for (const other of stores) {
              if (other === actor) continue;
              const leaked = other.markers.filter((marker) => seen.includes(marker) && !sent.includes(marker));
              expect({ what, leaked }).toEqual({ what, leaked: [] });
            }

            // No change to any other store.
            const after = await snapshot();
            const prior = before;
            before = after;
            for (const other of stores) {
              if (other === actor) continue;
              expect({ what, store: other.id, rows: after[other.id] }).toEqual({ what, store: other.id, rows: prior[other.id] });
            }
          }),
        ),
        { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false, endOnFailure: true },
      );
      await lastRun.settled();
      stats.ms = Date.now() - started;
      expect(stats.requests).toBeGreaterThanOrEqual(Math.min(RUNS, 300));
    },
    TIME_LIMIT_MS + 30_000,
  );

  it("delivers every store's events to its own endpoints only", async () => {
    // The property published events in every store; let them all settle.
    await eventually(
      async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`))[0].n,
      (pending) => pending === 0,
      { what: 'every delivery to settle', deadlineMs: 20_000 },
    );
    const events = new Map(
      (await t.db.query<{ id: string; store_id: string }>('SELECT id, store_id FROM events')).map((row) => [row.id, row.store_id]),
    );
    expect(receiver.requests.length).toBeGreaterThan(stores.length * 4);
    for (const request of receiver.requests) {
      const pathStore = request.path.split('/')[1];
      const envelope = JSON.parse(request.body.toString('utf8')) as { id: string; data: Record<string, unknown> };
      expect({ path: request.path, event: envelope.id, store: events.get(envelope.id) }).toEqual({
        path: request.path,
        event: envelope.id,
        store: pathStore,
      });
      expect(request.headers['x-webhook-id']).toBe(envelope.id);
      const marker = JSON.stringify(envelope.data);
      for (const other of stores) if (other.id !== pathStore) expect(marker).not.toContain(other.id);
      stats.deliveriesChecked++;
    }
    // And in the database: every delivery joins an event and an endpoint of its own store.
    const [{ n }] = await t.db.query<{ n: number }>(`
      SELECT count(*)::int AS n FROM deliveries d
        JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
       WHERE d.store_id <> e.store_id OR d.store_id <> w.store_id`);
    expect(n).toBe(0);
  }, 40_000);
});
