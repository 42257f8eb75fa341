import { verifyWebhook } from '../src/receiver/verify-webhook';
import { startApp, TestApp } from './support/app';
import { ChildApp } from './support/child-app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { createStoreWithKey, expectError, expectJson } from './support/expectations';
import { createWebhook, CreatedWebhook, orderData, publish } from './support/fixtures';
import { ReceivedRequest, Receiver } from './support/receiver';

/**
 * Endpoint health against a real receiver: an endpoint that only fails is disabled once
 * (`failing`), with one signed webhook.disabled for the store's other endpoints, also with two
 * worker processes; a success now and then keeps an endpoint enabled; a 410 disables it (`gone`);
 * webhook.delivery_failed tells of failed deliveries, and never of its own, so there is no loop.
 * One attempt per delivery, and short thresholds, so that all this takes seconds.
 */

const HEALTH_ENV = { RETRY_SCHEDULE_MS: '0', ENDPOINT_DISABLE_AFTER_MS: '1500ms', ENDPOINT_DISABLE_MIN_FAILURES: '3' };
const STORE_SCOPES = ['webhooks:read', 'webhooks:write', 'events:write'];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface WebhookView {
  id: string;
  isActive: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
}

interface Envelope {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The envelope of a request, once its signature verified with the endpoint's secret. */
function verified(request: ReceivedRequest, webhook: CreatedWebhook): Envelope {
  return verifyWebhook(webhook.secret, request.headers, request.body);
}

function typeOf(request: ReceivedRequest): string {
  return (JSON.parse(request.body.toString()) as Envelope).type;
}

/** An API on a store of its own, so that one spec's operational events never reach another's endpoints. */
interface Store {
  id: string;
  key: string;
  webhook(path: string, events: string[]): Promise<CreatedWebhook>;
  get(id: string): Promise<WebhookView>;
  /** Publishes order.created, one at a time, every `everyMs`, until `done` holds. */
  publishUntil(done: () => Promise<boolean>, everyMs?: number, deadlineMs?: number): Promise<number>;
}

async function newStore(t: TestApp, receiver: Receiver, name: string): Promise<Store> {
  const { storeId, key } = await createStoreWithKey(t, name, STORE_SCOPES);
  const store: Store = {
    id: storeId,
    key: key.key,
    webhook: (path, events) => createWebhook(t, `${receiver.url}${path}`, events, {}, key.key),
    get: async (id) => expectJson<WebhookView>(await t.api(`/webhooks/${id}`, { key: key.key }), 200),
    async publishUntil(done, everyMs = 100, deadlineMs = 20_000) {
      let published = 0;
      await eventually(
        async () => {
          if (await done()) return true;
          await publish(t, 'order.created', orderData(++published), {}, key.key);
          return false;
        },
        (finished) => finished,
        { deadlineMs, intervalMs: everyMs, what: `${name}: the condition while publishing` },
      );
      return published;
    },
  };
  return store;
}

async function eventCount(db: TestDatabase, storeId: string, type: string): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE store_id = $1 AND type = $2', [storeId, type]);
  return n;
}

async function pendingCount(db: TestDatabase, storeId: string): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE store_id = $1 AND status = 'pending'`, [
    storeId,
  ]);
  return n;
}

describe('endpoint health (RETRY_SCHEDULE_MS=0, ENDPOINT_DISABLE_AFTER_MS=1500ms, ENDPOINT_DISABLE_MIN_FAILURES=3)', () => {
  let t: TestApp;
  let receiver: Receiver;
  const answers = new Map<string, (n: number) => number>();
  const counts = new Map<string, number>();

  beforeAll(async () => {
    receiver = await Receiver.start();
    // Each path answers by its script (the n-th request, from 1); others 200.
    receiver.respondWith((request, res) => {
      const n = (counts.get(request.path) ?? 0) + 1;
      counts.set(request.path, n);
      res.writeHead(answers.get(request.path)?.(n) ?? 200).end();
    });
    t = await startApp({ env: HEALTH_ENV });
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('lists the two operational types in a Webhooks category, and refuses to publish them through the API', async () => {
    const { data } = await expectJson<{ data: Array<{ type: string; category: string }> }>(await t.api('/event-types'), 200);
    expect(data.filter((entry) => entry.category === 'Webhooks').map((entry) => entry.type)).toEqual([
      'webhook.disabled',
      'webhook.delivery_failed',
    ]);
    const before = await eventCount(t.db, 'st_default', 'webhook.disabled');
    const example = { webhookId: 'wh_1', name: 'x', url: 'https://x.test/', reason: 'failing', disabledAt: '2026-11-25T10:00:00.000Z' };
    await expectError(
      await t.api('/events', { method: 'POST', json: { type: 'webhook.disabled', data: example } }),
      400,
      "type webhook.disabled is published by Hookline itself (about the store's endpoints) and cannot be published through the API; endpoints can subscribe to it",
    );
    const order = { type: 'order.created', data: orderData(1) };
    await expectError(
      await t.api('/events/batch', { method: 'POST', json: { events: [order, { type: 'webhook.delivery_failed', data: {} }] } }),
      400,
      "events[1].type webhook.delivery_failed is published by Hookline itself (about the store's endpoints) and cannot be published through the API; endpoints can subscribe to it",
    );
    expect(await eventCount(t.db, 'st_default', 'webhook.disabled')).toBe(before);
    expect(await eventCount(t.db, 'st_default', 'order.created')).toBe(0);
  });

  it('disables an endpoint that only fails, once, for failing, and tells the store’s other endpoints with signed events', async () => {
    const store = await newStore(t, receiver, 'Only failing');
    answers.set('/down', () => 500);
    const down = await store.webhook('/down', ['order.created', 'webhook.disabled']);
    const watcher = await store.webhook('/watch', ['webhook.disabled', 'webhook.delivery_failed']);

    const published = await store.publishUntil(async () => !(await store.get(down.id)).isActive);
    const disabled = await store.get(down.id);
    expect(disabled).toMatchObject({ isActive: false, disabledReason: 'failing', disabledAt: expect.stringMatching(ISO_MS) });

    // Failing for the whole threshold, with at least three failed deliveries in it.
    const failed = await t.db.query<{ updated_at: Date }>(
      `SELECT updated_at FROM deliveries WHERE webhook_id = $1 AND status = 'failed' AND last_status_code = 500 ORDER BY updated_at`,
      [down.id],
    );
    expect(failed.length).toBeGreaterThanOrEqual(3);
    expect(Date.parse(disabled.disabledAt!) - failed[0].updated_at.getTime()).toBeGreaterThanOrEqual(1_500);

    const [notice] = await receiver.waitFor(1, (r) => r.path === '/watch' && typeOf(r) === 'webhook.disabled');
    expect(verified(notice, watcher).data).toEqual({
      webhookId: down.id,
      name: `endpoint ${receiver.url}/down`,
      url: `${receiver.url}/down`,
      reason: 'failing',
      disabledAt: disabled.disabledAt,
    });

    // Each failed order.created delivery was told of, signed, with what the delivery log says.
    const failures = await receiver.waitFor(failed.length, (r) => r.path === '/watch' && typeOf(r) === 'webhook.delivery_failed');
    const told = failures.map((request) => verified(request, watcher).data);
    expect(told[0]).toEqual({
      deliveryId: expect.stringMatching(/^del_/),
      webhookId: down.id,
      eventId: expect.stringMatching(/^evt_/),
      eventType: 'order.created',
      attemptCount: 1,
      lastStatusCode: 500,
      lastError: 'HTTP 500',
    });

    await eventually(
      () => pendingCount(t.db, store.id),
      (n) => n === 0,
    );
    expect(await eventCount(t.db, store.id, 'webhook.disabled')).toBe(1);
    expect(receiver.to('/watch').filter((r) => typeOf(r) === 'webhook.disabled')).toHaveLength(1);
    // Never to the endpoint disabled, although it subscribes.
    expect(receiver.to('/down').filter((r) => typeOf(r) === 'webhook.disabled')).toEqual([]);
    expect(published).toBeGreaterThanOrEqual(3);

    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^hookline_endpoints_disabled\{reason="failing"\} [1-9]/m);
  });

  it('re-enabling through PUT clears the reason, and the endpoint gets the whole threshold again', async () => {
    const store = await newStore(t, receiver, 'Re-enabled');
    answers.set('/again', () => 500);
    const again = await store.webhook('/again', ['order.created']);
    await store.publishUntil(async () => !(await store.get(again.id)).isActive);

    const enabled = await expectJson<WebhookView>(
      await t.api(`/webhooks/${again.id}`, { method: 'PUT', json: { isActive: true }, key: store.key }),
      200,
    );
    expect(enabled).toMatchObject({ isActive: true, disabledReason: null, disabledAt: null });
    const reEnabledAt = Date.now();
    await store.publishUntil(async () => !(await store.get(again.id)).isActive);
    expect(Date.parse((await store.get(again.id)).disabledAt!) - reEnabledAt).toBeGreaterThanOrEqual(1_500);
  });

  it('keeps an endpoint enabled while one attempt in the threshold succeeds, however many fail', async () => {
    const store = await newStore(t, receiver, 'Flaky');
    // Three failures (as many as ENDPOINT_DISABLE_MIN_FAILURES), then a success, and again.
    answers.set('/flaky', (n) => (n % 4 === 0 ? 200 : 500));
    const flaky = await store.webhook('/flaky', ['order.created']);
    const started = Date.now();
    await store.publishUntil(async () => Date.now() - started > 4_000, 100);
    await eventually(
      () => pendingCount(t.db, store.id),
      (n) => n === 0,
    );
    const [{ failed }] = await t.db.query<{ failed: number }>(
      `SELECT count(*)::int AS failed FROM deliveries WHERE webhook_id = $1 AND status = 'failed'`,
      [flaky.id],
    );
    expect(failed).toBeGreaterThanOrEqual(10);
    expect(await store.get(flaky.id)).toMatchObject({ isActive: true, disabledReason: null });
    expect(await eventCount(t.db, store.id, 'webhook.disabled')).toBe(0);
  });

  it('disables an endpoint that answers 410 at once, for gone, with one webhook.disabled', async () => {
    const store = await newStore(t, receiver, 'Gone');
    answers.set('/gone', () => 410);
    const gone = await store.webhook('/gone', ['order.created']);
    const watcher = await store.webhook('/watch-gone', ['webhook.disabled']);
    await publish(t, 'order.created', orderData(1), {}, store.key);

    const disabled = await eventually(
      () => store.get(gone.id),
      (w) => !w.isActive,
    );
    expect(disabled).toMatchObject({ disabledReason: 'gone', disabledAt: expect.stringMatching(ISO_MS) });
    const [notice] = await receiver.waitFor(1, (r) => r.path === '/watch-gone');
    expect(verified(notice, watcher)).toMatchObject({
      type: 'webhook.disabled',
      data: { webhookId: gone.id, reason: 'gone', disabledAt: disabled.disabledAt },
    });
    expect(await eventCount(t.db, store.id, 'webhook.disabled')).toBe(1);
  });

  it('changes nothing and tells nobody again when a person disables an endpoint Hookline disabled', async () => {
    const store = await newStore(t, receiver, 'Gone, then disabled by hand');
    answers.set('/gone-again', () => 410);
    const gone = await store.webhook('/gone-again', ['order.created']);
    await store.webhook('/watch-gone-again', ['webhook.disabled']);
    await publish(t, 'order.created', orderData(1), {}, store.key);
    const disabled = await eventually(
      () => store.get(gone.id),
      (w) => !w.isActive,
    );
    await receiver.waitFor(1, (r) => r.path === '/watch-gone-again');
    const row = await t.db.query('SELECT * FROM webhooks WHERE id = $1', [gone.id]);

    const again = await expectJson<WebhookView>(
      await t.api(`/webhooks/${gone.id}`, { method: 'PUT', json: { isActive: false }, key: store.key }),
      200,
    );
    expect(again).toEqual(disabled);
    expect(again).toMatchObject({ isActive: false, disabledReason: 'gone' });
    expect(await t.db.query('SELECT * FROM webhooks WHERE id = $1', [gone.id])).toEqual(row);
    // The event would be written in the PUT's own transaction: there is none.
    expect(await eventCount(t.db, store.id, 'webhook.disabled')).toBe(1);
  });

  it('sends no webhook.disabled when a person disables an endpoint', async () => {
    const store = await newStore(t, receiver, 'Manual');
    const target = await store.webhook('/manual', ['order.created']);
    await store.webhook('/watch-manual', ['webhook.disabled']);
    const res = await t.api(`/webhooks/${target.id}`, { method: 'PUT', json: { isActive: false }, key: store.key });
    expect(await expectJson<WebhookView>(res, 200)).toMatchObject({ isActive: false, disabledReason: 'manual' });
    expect(await eventCount(t.db, store.id, 'webhook.disabled')).toBe(0);
  });
});

describe('no loop: every endpoint of a store fails and subscribes to both operational types', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    receiver.respondStatus(500);
    // The default thresholds: nothing is disabled, every order delivery's failure is told.
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0' } });
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('tells of each failed order delivery once, and of the failed deliveries of those events never', async () => {
    const store = await newStore(t, receiver, 'All failing');
    const events = ['order.created', 'webhook.disabled', 'webhook.delivery_failed'];
    for (const path of ['/a', '/b', '/c']) await store.webhook(path, events);
    for (let i = 1; i <= 5; i++) await publish(t, 'order.created', orderData(i), {}, store.key);

    // 5 orders × 3 endpoints fail: 15 webhook.delivery_failed, each to the 3 endpoints: 45 more failures that tell nobody.
    await eventually(
      async () => ({ told: await eventCount(t.db, store.id, 'webhook.delivery_failed'), pending: await pendingCount(t.db, store.id) }),
      ({ told, pending }) => told === 15 && pending === 0,
      { what: 'every delivery ended' },
    );
    await receiver.waitFor(60);
    const [{ failed }] = await t.db.query<{ failed: number }>(
      `SELECT count(*)::int AS failed FROM deliveries WHERE store_id = $1 AND status = 'failed'`,
      [store.id],
    );
    expect(failed).toBe(60);
    // Nothing is left that could publish more: the counts are final.
    expect(await eventCount(t.db, store.id, 'order.created')).toBe(5);
    expect(await eventCount(t.db, store.id, 'webhook.delivery_failed')).toBe(15);
    expect(await eventCount(t.db, store.id, 'webhook.disabled')).toBe(0);
  });
});

describe('two worker processes on one failing endpoint', () => {
  let db: TestDatabase;
  let api: TestApp;
  let workers: ChildApp[] = [];
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    receiver.respondWith((request, res) => res.writeHead(request.path === '/down' ? 500 : 200).end());
    db = await createTestDatabase();
    api = await startApp({ db, env: { ...HEALTH_ENV, ROLE: 'api' } });
    workers = await Promise.all(
      ['health-worker-a', 'health-worker-b'].map((name) =>
        ChildApp.start({ databaseUrl: db.url, name, env: { ...HEALTH_ENV, ROLE: 'worker', LOG_LEVEL: 'warn' }, startDeadlineMs: 90_000 }),
      ),
    );
    // Two processes compiling TypeScript at once on a busy machine.
  }, 120_000);

  afterAll(async () => {
    await ChildApp.killAll();
    await receiver?.close();
    await api?.close();
    await db?.drop();
  });

  it('disables it once, with one webhook.disabled', async () => {
    const store = await newStore(api, receiver, 'Two workers');
    const down = await store.webhook('/down', ['order.created']);
    const watcher = await store.webhook('/watch', ['webhook.disabled']);

    // Bursts of four, so that both workers claim the failing endpoint's deliveries.
    await store.publishUntil(async () => {
      for (let i = 0; i < 3; i++) await publish(api, 'order.created', orderData(i), {}, store.key);
      return !(await store.get(down.id)).isActive;
    }, 100);
    expect(await store.get(down.id)).toMatchObject({ isActive: false, disabledReason: 'failing' });

    const [notice] = await receiver.waitFor(1, (r) => r.path === '/watch');
    expect(verified(notice, watcher).data).toMatchObject({ webhookId: down.id, reason: 'failing' });
    await eventually(
      () => pendingCount(db, store.id),
      (n) => n === 0,
    );
    expect(await eventCount(db, store.id, 'webhook.disabled')).toBe(1);
    expect(receiver.to('/watch')).toHaveLength(1);
    const logged = workers.flatMap((w) => w.logLines()).filter((line) => line.msg?.includes(`disabled endpoint ${down.id}`));
    expect(logged).toHaveLength(1);
  }, 60_000);
});
