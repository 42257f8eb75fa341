import { ChildApp } from './support/child-app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { orderData } from './support/fixtures';
import { Receiver, ReceivedRequest } from './support/receiver';

/**
 * Per-endpoint rateLimitPerSecond and ordered, with the work shared by two worker processes
 * (ROLE=worker) on one PostgreSQL and the API in a third (ROLE=api): the limit and the order hold
 * across processes because they live in the database, not in a worker.
 */
describe('flow control across worker processes', () => {
  let receiver: Receiver;
  let db: TestDatabase;
  let api: ChildApp;

  beforeAll(async () => {
    receiver = await Receiver.start();
    db = await createTestDatabase();
    // Started together; each compiles the app on start, which is slow on a busy machine.
    const start = (name: string, role: string) =>
      ChildApp.start({ databaseUrl: db.url, name, env: { ROLE: role }, startDeadlineMs: 120_000 });
    [api] = await Promise.all([start('flow-api', 'api'), start('flow-worker-1', 'worker'), start('flow-worker-2', 'worker')]);
  }, 150_000);

  afterAll(async () => {
    await ChildApp.killAll();
    await db?.drop();
    await receiver?.close();
  });

  async function createEndpoint(path: string, type: string, settings: Record<string, unknown> = {}): Promise<string> {
    const res = await api.api('/webhooks', {
      method: 'POST',
      json: { name: path, url: `${receiver.url}${path}`, events: [type], ...settings },
    });
    if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  }

  async function publish(type: string, data: Record<string, unknown>): Promise<string> {
    const res = await api.api('/events', { method: 'POST', json: { type, data } });
    if (res.status !== 202) throw new Error(`publish: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  }

  const eventIdOf = (request: ReceivedRequest): string => String(request.headers['x-webhook-id']);
  /** The `n` of orderData(n) in the delivered body. */
  const orderOf = (request: ReceivedRequest): number =>
    Number((JSON.parse(request.body.toString()) as { data: { id: string } }).data.id.slice('ord_'.length));

  it('keeps a rate-limited endpoint within its limit across two workers, delivers everything once, and never slows another endpoint', async () => {
    const limit = 5;
    const events = 30;
    await createEndpoint('/rate/limited', 'order.created', { rateLimitPerSecond: limit });
    await createEndpoint('/rate/free', 'order.created');
    const started = Date.now();
    await Promise.all(Array.from({ length: events }, (_, i) => publish('order.created', orderData(i))));
    const published = Date.now();

    // The unlimited endpoint has all of them within moments, long before the limited one can.
    await receiver.waitFor(events, (r) => r.path === '/rate/free', 5_000);
    const freeDoneMs = Date.now() - published;
    const limited = await receiver.waitFor(events, (r) => r.path === '/rate/limited', 30_000);
    const limitedDoneMs = Date.now() - published;
    expect(freeDoneMs).toBeLessThan(3_000);
    const times = limited.map((r) => r.at).sort((a, b) => a - b);
    // 30 at 5 a second are claimed over six seconds of the database clock, so the first and the last
    // claim are more than 4 s apart; a send's own delay on a busy machine shortens that a little.
    const spreadMs = times[times.length - 1] - times[0];
    const [{ startedSpreadMs }] = await db.query<{ startedSpreadMs: number }>(
      `SELECT extract(epoch FROM max(a.started_at) - min(a.started_at)) * 1000 AS "startedSpreadMs"
       FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id AND d.store_id = a.store_id
       JOIN webhooks w ON w.id = d.webhook_id AND w.store_id = d.store_id
       WHERE w.url LIKE '%/rate/limited'`,
    );
    const perSecond = (
      await db.query<{ n: number }>(
        `SELECT date_trunc('second', a.started_at) AS s, count(*)::int AS n
         FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id AND d.store_id = a.store_id
         JOIN webhooks w ON w.id = d.webhook_id AND w.store_id = d.store_id
         WHERE w.url LIKE '%/rate/limited' GROUP BY 1 ORDER BY 1`,
      )
    ).map((row) => row.n);
    expect(spreadMs).toBeGreaterThan(2_500);

    // Any one-second window holds at most the limit plus one second's burst.
    let busiest = 0;
    for (let i = 0; i < times.length; i++) {
      let j = i;
      while (j < times.length && times[j] - times[i] < 1_000) j++;
      busiest = Math.max(busiest, j - i);
    }
    expect(busiest).toBeLessThanOrEqual(2 * limit);
    // Each event exactly once.
    expect(new Set(limited.map(eventIdOf)).size).toBe(events);
    expect(receiver.to('/rate/limited')).toHaveLength(events);
    console.log(
      `rate limit ${limit}/s, ${events} events, 2 workers: busiest 1 s window ${busiest}, first to last ${spreadMs} ms (attempts started over ${Math.round(Number(startedSpreadMs))} ms, ${JSON.stringify(perSecond)} a second); free endpoint done ${freeDoneMs} ms, ` +
        `limited ${limitedDoneMs} ms after publishing (published in ${published - started} ms)`,
    );
  }, 60_000);

  it('delivers an ordered endpoint one at a time in publish order across two workers, through failed attempts', async () => {
    const events = 24;
    const path = '/ordered/retries';
    await createEndpoint(path, 'order.updated', { ordered: true, retrySchedule: [0, 200, 200, 200] });
    const attemptsOf = new Map<number, number>();
    let inFlight = 0;
    let overlapped = 0;
    const succeeded: number[] = [];
    receiver.respondWith((request, res) => {
      if (request.path !== path) return res.writeHead(200).end();
      inFlight++;
      if (inFlight > 1) overlapped++;
      const n = orderOf(request);
      const attempt = (attemptsOf.get(n) ?? 0) + 1;
      attemptsOf.set(n, attempt);
      // The first try of every third event fails.
      const status = n % 3 === 0 && attempt === 1 ? 500 : 200;
      setTimeout(() => {
        inFlight--;
        if (status === 200) succeeded.push(n);
        res.writeHead(status).end();
      }, 3);
    });
    const ids: string[] = [];
    for (let i = 0; i < events; i++) ids.push(await publish('order.updated', orderData(i)));

    await eventually(
      async () => succeeded.length,
      (n) => n === events,
      { deadlineMs: 30_000, intervalMs: 50, what: 'every ordered delivery succeeded' },
    );
    // Publish order is event id order.
    const byId = [...ids].map((id, n) => ({ id, n })).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(succeeded).toEqual(byId.map((e) => e.n));
    expect(overlapped).toBe(0);
    expect([...attemptsOf.values()].filter((n) => n === 2)).toHaveLength(events / 3);
  }, 60_000);

  it('releases the next delivery of an ordered endpoint when one ends failed', async () => {
    const path = '/ordered/failing';
    await createEndpoint(path, 'order.cancelled', { ordered: true, retrySchedule: [0, 100, 100] });
    const arrivals: Array<{ n: number; at: number; status: number }> = [];
    receiver.respondWith((request, res) => {
      if (request.path !== path) return res.writeHead(200).end();
      const n = orderOf(request);
      // The second event never succeeds.
      const status = n === 1 ? 503 : 200;
      arrivals.push({ n, at: Date.now(), status });
      res.writeHead(status).end();
    });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await publish('order.cancelled', { ...orderData(i), status: 'CANCELLED' }));

    await eventually(
      async () => arrivals.filter((a) => a.status === 200).length,
      (n) => n === 3,
      { deadlineMs: 20_000, intervalMs: 50, what: 'the three events after a failing one delivered' },
    );
    // Event 1 was tried three times and ended failed before 2 and 3 went out, in order.
    expect(arrivals.map((a) => a.n)).toEqual([0, 1, 1, 1, 2, 3]);
    const [{ status }] = await db.query<{ status: string }>(`SELECT status FROM deliveries WHERE event_id = $1`, [ids[1]]);
    expect(status).toBe('failed');
  }, 60_000);
});
