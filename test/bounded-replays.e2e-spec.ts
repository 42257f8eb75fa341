import { Client } from 'pg';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { expectError, expectJson, rowCounts } from './support/expectations';
import { createWebhook, deliveriesOf, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

/** The first key of the replay lock (DeliveryLog): a replay holding it shows in pg_locks. */
const REPLAY_LOCK = 0x48_4c_52_50;

interface Batch {
  queued: number;
  next?: string;
}

/**
 * POST /webhooks/:id/replay and /deliveries/retry-failed against the real app and a real receiver,
 * with MAX_REPLAY_DELIVERIES=5: a request queues at most 5 and answers the `since` that continues,
 * continuing sends every event exactly once, two at once on one endpoint answer 409 for the second,
 * and a request that runs past REPLAY_TIMEOUT_MS queues nothing.
 */
describe('bounded replays', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({ env: { MAX_REPLAY_DELIVERIES: '5', REPLAY_TIMEOUT_MS: '3000' } });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const replay = (webhookId: string, json: Record<string, unknown>): Promise<Response> =>
    t.api(`/webhooks/${webhookId}/replay`, { method: 'POST', json });
  const retryFailed = (webhookId: string, json: Record<string, unknown>): Promise<Response> =>
    t.api(`/webhooks/${webhookId}/deliveries/retry-failed`, { method: 'POST', json });

  /** 12 events of `type`: three alone, four in one batch (one millisecond), five alone. Answers their ids in publish order. */
  async function publishTwelve(type: string): Promise<string[]> {
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await publish(t, type, orderData(n))).id);
    const batch = await expectJson<{ data: Array<{ id: string }> }>(
      await t.api('/events/batch', { method: 'POST', json: { events: [3, 4, 5, 6].map((n) => ({ type, data: orderData(n) })) } }),
      202,
    );
    ids.push(...batch.data.map((event) => event.id));
    for (let n = 7; n < 12; n++) ids.push((await publish(t, type, orderData(n))).id);
    return ids;
  }

  /** Sends `request` with `since`, then again with each answer's `next`, until none; answers every answer. */
  async function continueToEnd(request: (since: string) => Promise<Response>, since: string): Promise<Batch[]> {
    const answers: Batch[] = [];
    for (let next: string | undefined = since; next !== undefined && answers.length < 20;) {
      const answer: Batch = await expectJson<Batch>(await request(next), 202);
      answers.push(answer);
      next = answer.next;
    }
    return answers;
  }

  /** Holds the deliveries table in SHARE mode (no row can be written) until the returned function is called. */
  async function blockDeliveryWrites(): Promise<() => Promise<void>> {
    const client = new Client({ connectionString: t.db.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE deliveries IN SHARE MODE');
    return async () => {
      await client.query('ROLLBACK');
      await client.end();
    };
  }

  it('replays at most MAX_REPLAY_DELIVERIES per request and answers where to continue; continuing sends each event exactly once', async () => {
    const since = new Date().toISOString();
    const webhook = await createWebhook(t, `${receiver.url}/replayed`, ['order.created'], { isActive: false });
    const events = await publishTwelve('order.created');
    await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: true } }), 200);

    const answers = await continueToEnd((from) => replay(webhook.id, { since: from }), since);
    expect(answers.length).toBeGreaterThanOrEqual(3);
    for (const answer of answers) expect(answer.queued).toBeLessThanOrEqual(5);
    expect(answers.slice(0, -1).every((answer) => typeof answer.next === 'string')).toBe(true);
    expect(answers.at(-1)).toEqual({ queued: expect.any(Number) as number });
    expect(answers.reduce((sum, answer) => sum + answer.queued, 0)).toBe(12);

    await receiver.waitFor(12, (r) => r.path === '/replayed');
    const log = await eventually(
      () => deliveriesOf(t, webhook.id, '?limit=100'),
      (rows) => rows.length === 12 && rows.every((row) => row.status === 'succeeded'),
    );
    expect(log.map((row) => row.eventId).sort()).toEqual([...events].sort());
    const arrived = receiver.to('/replayed').map((request) => String(request.headers['x-webhook-id']));
    expect(arrived.sort()).toEqual([...events].sort());
    expect(await expectJson(await replay(webhook.id, { since }), 202)).toEqual({ queued: 0 });
  });

  it('retries at most MAX_REPLAY_DELIVERIES failed deliveries per request; continuing retries each exactly once', async () => {
    receiver.respondWith((request, res) => res.writeHead(request.path === '/failing' ? 500 : 200).end());
    const since = new Date().toISOString();
    const webhook = await createWebhook(t, `${receiver.url}/failing`, ['order.updated'], { retrySchedule: [0] });
    const events = await publishTwelve('order.updated');
    await eventually(
      () => deliveriesOf(t, webhook.id, '?status=failed&limit=100'),
      (rows) => rows.length === 12,
    );
    receiver.respondStatus(200);

    const answers = await continueToEnd((from) => retryFailed(webhook.id, { since: from }), since);
    expect(answers.length).toBeGreaterThanOrEqual(3);
    for (const answer of answers) expect(answer.queued).toBeLessThanOrEqual(5);
    expect(answers.reduce((sum, answer) => sum + answer.queued, 0)).toBe(12);

    const log = await eventually(
      () => deliveriesOf(t, webhook.id, '?limit=100'),
      (rows) => rows.length === 12 && rows.every((row) => row.status === 'succeeded'),
    );
    expect(log.every((row) => row.attemptCount === 2)).toBe(true);
    const arrived = receiver.to('/failing').map((request) => String(request.headers['x-webhook-id']));
    expect(arrived.sort()).toEqual([...events, ...events].sort());
  });

  it('answers 409 to a second replay or retry-failed of an endpoint while one runs, and the first still completes', async () => {
    const since = new Date().toISOString();
    const webhook = await createWebhook(t, `${receiver.url}/one-at-a-time`, ['order.cancelled'], { isActive: false });
    await publish(t, 'order.cancelled', orderData(1));
    await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: true } }), 200);

    const release = await blockDeliveryWrites();
    let first: Promise<Response>;
    try {
      first = replay(webhook.id, { since });
      await eventually(
        async () =>
          (
            await t.db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND granted`,
              [REPLAY_LOCK],
            )
          )[0].n,
        (n) => n === 1,
        { what: 'the first replay holding its lock' },
      );
      const counts = await rowCounts(t.db);
      await expectError(await replay(webhook.id, { since }), 409, /already running/);
      await expectError(await retryFailed(webhook.id, {}), 409, /already running/);
      expect(await rowCounts(t.db)).toEqual(counts);
    } finally {
      await release();
    }
    expect(await expectJson(await first, 202)).toEqual({ queued: 1 });
    await receiver.waitFor(1, (r) => r.path === '/one-at-a-time');
  });

  it('cancels a replay that runs past REPLAY_TIMEOUT_MS with 503, queuing nothing', async () => {
    const since = new Date().toISOString();
    const webhook = await createWebhook(t, `${receiver.url}/slow`, ['order.completed'], { isActive: false });
    await publish(t, 'order.completed', orderData(1));
    await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: true } }), 200);

    const release = await blockDeliveryWrites();
    try {
      const started = Date.now();
      await expectError(await replay(webhook.id, { since }), 503, /longer than 3000 ms and was cancelled, queuing nothing/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    } finally {
      await release();
    }
    expect(await deliveriesOf(t, webhook.id)).toEqual([]);
    expect(await expectJson(await replay(webhook.id, { since }), 202)).toEqual({ queued: 1 });
  });
});
