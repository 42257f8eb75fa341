import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createWebhook, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

async function statusCounts(t: TestApp): Promise<Record<string, number>> {
  const rows = await t.db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM deliveries GROUP BY status`);
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

describe('several dispatchers, slow endpoints', () => {
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await receiver?.close();
  });

  it('delivers every event exactly once with two dispatcher instances on one database', async () => {
    const first = await startApp();
    const second = await startApp({ db: first.db });
    try {
      const a = await createWebhook(first, `${receiver.url}/pair/a`, ['order.created']);
      const b = await createWebhook(first, `${receiver.url}/pair/b`, ['order.created']);
      const events = 300;
      // Publish through both instances, so both are woken.
      await Promise.all(Array.from({ length: events }, (_, i) => publish(i % 2 ? first : second, 'order.created', orderData(i))));

      await receiver.waitFor(events * 2, (r) => r.path.startsWith('/pair/'), 30_000);
      await eventually(
        () => statusCounts(first),
        (counts) => counts.succeeded === events * 2,
        { deadlineMs: 10_000 },
      );

      const seen = new Map<string, number>();
      for (const request of receiver.requests.filter((r) => r.path.startsWith('/pair/'))) {
        const key = `${request.path} ${String(request.headers['x-webhook-id'])}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      expect(seen.size).toBe(events * 2);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
      const [attempts] = await first.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM delivery_attempts`);
      expect(attempts.n).toBe(events * 2);
      expect([a.id, b.id]).toHaveLength(2);
    } finally {
      await second.close();
      await first.close();
    }
  }, 60_000);

  /**
   * An app with 4 slots per endpoint and two endpoints under `/<prefix>/`: `hanging`, whose
   * requests the receiver holds until `release()`, and `healthy`. Both belong to one store, which
   * may use every slot: a store's own share (STORE_CONCURRENCY, a quarter by default, here as few
   * as an endpoint's) is test/fair-dispatch.e2e-spec.ts's subject, not this one's.
   */
  async function withHangingEndpoint(prefix: string, test: (t: TestApp, release: () => void) => Promise<void>): Promise<void> {
    const t = await startApp({
      env: { DELIVERY_TIMEOUT_MS: '5000', ENDPOINT_CONCURRENCY: '4', DISPATCH_CONCURRENCY: '16', STORE_CONCURRENCY: '16' },
    });
    const hung: Array<() => void> = [];
    receiver.respondWith((request, res) => {
      if (request.path === `/${prefix}/hanging`) hung.push(() => res.writeHead(200).end());
      else res.writeHead(200).end();
    });
    // From then on the endpoint answers at once.
    const release = (): void => {
      receiver.respondStatus(200);
      for (const answer of hung.splice(0)) answer();
    };
    try {
      await createWebhook(t, `${receiver.url}/${prefix}/hanging`, ['stock.updated']);
      await createWebhook(t, `${receiver.url}/${prefix}/healthy`, ['stock.updated']);
      await test(t, release);
    } finally {
      release();
      await t.close();
    }
  }

  const stockUpdated = (i: number): Record<string, unknown> => ({ productId: `p${i}`, sku: `S${i}`, previousQuantity: 1, quantity: 2 });

  it('does not let a hanging endpoint delay a healthy one', async () => {
    await withHangingEndpoint('iso', async (t) => {
      const started = Date.now();
      for (let i = 0; i < 60; i++) await publish(t, 'stock.updated', stockUpdated(i));

      // All 60 reach the healthy endpoint while the hanging one holds its 4 slots for 5 s each.
      await receiver.waitFor(60, (r) => r.path === '/iso/healthy', 3_000);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(receiver.to('/iso/hanging').length).toBeLessThanOrEqual(4);
    });
  }, 30_000);

  it('keeps the per-endpoint slots when publishes come together and their deliveries go straight to the worker', async () => {
    await withHangingEndpoint('together', async (t, release) => {
      // Published at once, they are written in group commits of several events each, and the
      // worker takes their deliveries from the publish itself (no claim): the slots must hold there too.
      await Promise.all(Array.from({ length: 60 }, (_, i) => publish(t, 'stock.updated', stockUpdated(i))));
      await receiver.waitFor(60, (r) => r.path === '/together/healthy', 3_000);
      await receiver.waitFor(4, (r) => r.path === '/together/hanging', 3_000);
      expect(receiver.to('/together/hanging').length).toBe(4);
      // The hanging endpoint's other 56 wait in the database, unattempted, for a free slot.
      const [{ n: waiting }] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
         WHERE w.url LIKE '%/together/hanging' AND d.status = 'pending' AND d.attempt_count = 0`,
      );
      expect(waiting).toBe(56);

      // Once the endpoint answers, its freed slots wake the worker, which sends the other 56.
      release();
      await receiver.waitFor(60, (r) => r.path === '/together/hanging', 10_000);
    });
  }, 30_000);
});
