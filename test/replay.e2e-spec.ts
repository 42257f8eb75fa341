import { Client, type Notification } from 'pg';
import { EVENT_CATALOGUE } from '../src/catalogue/event-catalogue';
import { DELIVERIES_CHANNEL } from '../src/dispatch/store/deliveries-channel';
import { verifyWebhook } from '../src/receiver/verify-webhook';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createStoreWithKey, expectError, expectJson, rowCounts } from './support/expectations';
import { createWebhook, deliveriesOf, orderData, publish, type Published } from './support/fixtures';
import { Receiver } from './support/receiver';

const CUSTOMER = { ...EVENT_CATALOGUE['customer.created'].example };
const PRODUCT = { ...EVENT_CATALOGUE['product.created'].example };

/**
 * POST /webhooks/:id/replay against the real app and a real receiver: an endpoint disabled for a
 * while, re-enabled, is sent exactly the events of its types published meanwhile in its store, once.
 */
describe('replaying what an endpoint missed (POST /webhooks/:id/replay)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let otherKey: string;

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({ env: { RETENTION_DAYS: '2' } });
    ({
      key: { key: otherKey },
    } = await createStoreWithKey(t, 'Other store', ['webhooks:read', 'webhooks:write', 'events:write']));
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const replay = (webhookId: string, json: unknown, key?: string): Promise<Response> =>
    t.api(`/webhooks/${webhookId}/replay`, { method: 'POST', json, key });

  async function setActive(webhookId: string, isActive: boolean): Promise<Record<string, unknown>> {
    return expectJson(await t.api(`/webhooks/${webhookId}`, { method: 'PUT', json: { isActive } }), 200);
  }

  it('sends a re-enabled endpoint, signed, exactly the events of its types published while it was disabled, and a second replay queues none', async () => {
    const since = new Date().toISOString();
    const webhook = await createWebhook(t, `${receiver.url}/paused`, ['order.created', 'customer.created']);
    const delivered = await publish(t, 'order.created', orderData(1));
    await receiver.waitFor(1, (r) => r.path === '/paused');

    expect(await setActive(webhook.id, false)).toMatchObject({ isActive: false, disabledReason: 'manual' });
    const missed = [await publish(t, 'order.created', orderData(2)), await publish(t, 'customer.created', CUSTOMER)];
    await publish(t, 'product.created', PRODUCT);
    const otherStoreHook = await createWebhook(t, `${receiver.url}/other-store`, ['order.created'], {}, otherKey);
    await publish(t, 'order.created', orderData(3), {}, otherKey);
    await receiver.waitFor(1, (r) => r.path === '/other-store');
    expect(await setActive(webhook.id, true)).toMatchObject({ isActive: true, disabledReason: null, disabledAt: null });

    expect(await expectJson(await replay(webhook.id, { since }), 202)).toEqual({ queued: 2 });
    const arrived = await receiver.waitFor(3, (r) => r.path === '/paused');
    const envelopes = arrived.map((request) => verifyWebhook(webhook.secret, request.headers, request.body));
    expect(envelopes[0].id).toBe(delivered.id);
    expect(
      envelopes
        .slice(1)
        .map((envelope) => envelope.id)
        .sort(),
    ).toEqual(missed.map((event) => event.id).sort());
    expect(arrived.map((request) => request.headers['x-webhook-id'])).toEqual(envelopes.map((envelope) => envelope.id));

    expect(await expectJson(await replay(webhook.id, { since }), 202)).toEqual({ queued: 0 });
    const log = await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows.every((row) => row.status === 'succeeded'),
    );
    expect(log.map((row) => row.eventId).sort()).toEqual([delivered.id, ...missed.map((event) => event.id)].sort());
    // The other store's endpoint has its own event only, once.
    expect(
      (await expectJson<{ data: unknown[] }>(await t.api(`/webhooks/${otherStoreHook.id}/deliveries`, { key: otherKey }), 200)).data,
    ).toHaveLength(1);
  });

  it('wakes the workers when it commits, so the deliveries go out at once', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/woken`, ['order.updated'], { isActive: false });
    const since = new Date(Date.now() - 1_000).toISOString();
    const missed = await publish(t, 'order.updated', orderData(4));
    await setActive(webhook.id, true);

    const listener = new Client({ connectionString: t.db.url });
    await listener.connect();
    const notifications: Notification[] = [];
    listener.on('notification', (notification) => notifications.push(notification));
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    try {
      expect(await expectJson(await replay(webhook.id, { since }), 202)).toEqual({ queued: 1 });
      await eventually(
        async () => notifications.length,
        (count) => count > 0,
        { what: `a NOTIFY on ${DELIVERIES_CHANNEL}` },
      );
    } finally {
      await listener.end();
    }
    const [request] = await receiver.waitFor(1, (r) => r.path === '/woken');
    expect(verifyWebhook(webhook.secret, request.headers, request.body).id).toBe(missed.id);
  });

  it('replays only the window asked for, and no further back than retention (RETENTION_DAYS)', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/window`, ['order.completed'], { isActive: false });
    const completed = (n: number): Promise<Published> => publish(t, 'order.completed', orderData(n));
    const expired = await completed(1);
    await t.db.query(`UPDATE events SET created_at = now() - interval '3 days' WHERE id = $1`, [expired.id]);
    const before = await completed(2);
    const from = new Date(Date.parse(before.timestamp) + 1).toISOString();
    const inside = await completed(3);
    const until = new Date(Date.parse(inside.timestamp) + 1).toISOString();
    await completed(4);
    await setActive(webhook.id, true);

    expect(await expectJson(await replay(webhook.id, { since: from, until }), 202)).toEqual({ queued: 1 });
    const [arrived] = await receiver.waitFor(1, (r) => r.path === '/window');
    expect(verifyWebhook(webhook.secret, arrived.headers, arrived.body).id).toBe(inside.id);
    const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
    expect(await expectJson(await replay(webhook.id, { since: weekAgo }), 202)).toEqual({ queued: 2 });
    await receiver.waitFor(3, (r) => r.path === '/window');
    const eventIds = (await deliveriesOf(t, webhook.id)).map((row) => row.eventId);
    expect(eventIds).not.toContain(expired.id);
    expect(eventIds).toHaveLength(3);
  });

  describe('refuses, changing nothing', () => {
    let active: { id: string };
    let inactive: { id: string };
    let otherStores: { id: string };
    const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString();

    beforeAll(async () => {
      active = await createWebhook(t, `${receiver.url}/refused`, ['order.created']);
      inactive = await createWebhook(t, `${receiver.url}/refused-inactive`, ['order.created'], { isActive: false });
      otherStores = await createWebhook(t, `${receiver.url}/refused-other`, ['order.created'], {}, otherKey);
      await publish(t, 'order.created', orderData(9));
      await publish(t, 'order.created', orderData(9), {}, otherKey);
      await eventually(
        async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`))[0].n,
        (n) => n === 0,
      );
      // The inactive endpoint missed an event: a replay would have something to send it.
      expect(receiver.to('/refused-inactive')).toHaveLength(0);
    });

    async function expectRefused(res: Response, status: number, message?: string | RegExp): Promise<void> {
      const counts = await rowCounts(t.db);
      await expectError(res, status, message);
      expect(await rowCounts(t.db)).toEqual(counts);
    }

    it.each<[string, unknown, string | RegExp]>([
      ['a window in the future', { since: new Date(Date.now() + 3_600_000).toISOString() }, /since is in the future/],
      [
        'a reversed window',
        { since: new Date().toISOString(), until: new Date(Date.now() - 3_600_000).toISOString() },
        'since must be earlier than until',
      ],
      ['an empty window', { since: '2026-11-22T10:00:00.000Z', until: '2026-11-22T10:00:00.000Z' }, 'since must be earlier than until'],
      ['an unparseable since', { since: 'last week' }, 'since must be an ISO 8601 date-time'],
      ['an impossible date', { since: '2026-02-30T00:00:00Z' }, 'since must be an ISO 8601 date-time'],
      ['an unparseable until', { since: '2026-11-22T10:00:00.000Z', until: 'now' }, 'until must be an ISO 8601 date-time'],
      ['a number', { since: 1_795_000_000_000 }, 'since must be an ISO 8601 date-time'],
      ['no since', {}, 'since is required'],
      ['an unknown field', { since: '2026-11-22T10:00:00.000Z', limit: 5 }, /limit/],
    ])('400 for %s', async (_label, body, message) => {
      await expectRefused(await replay(active.id, body), 400, message);
    });

    it('409 for an inactive endpoint, saying to re-enable it first', async () => {
      await expectRefused(
        await replay(inactive.id, { since: hourAgo() }),
        409,
        /inactive; re-enable it \(PUT isActive: true\) before replaying/,
      );
    });

    it("404 for another store's endpoint and for an unknown id", async () => {
      await expectRefused(await replay(otherStores.id, { since: hourAgo() }), 404, `Webhook ${otherStores.id} not found`);
      await expectRefused(await replay(active.id, { since: hourAgo() }, otherKey), 404, `Webhook ${active.id} not found`);
      await expectRefused(await replay('wh_00000000000000000000000000', { since: hourAgo() }), 404);
    });

    it('403 for a key without webhooks:write', async () => {
      const reader = await expectJson<{ key: string }>(
        await t.api('/api-keys', { method: 'POST', json: { name: 'reader', scopes: ['webhooks:read'] } }),
        201,
      );
      await expectRefused(await replay(active.id, { since: hourAgo() }, reader.key), 403);
    });
  });
});
