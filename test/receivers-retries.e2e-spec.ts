import type { ServerResponse } from 'node:http';
import { startApp, TestApp } from './support/app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { expectJson, ISO_MS } from './support/expectations';
import { createWebhook, delivery, DeliveryView, deliveriesOf, orderData, publish } from './support/fixtures';
import { ReceivedRequest, Receiver } from './support/receiver';

/**
 * When the next attempt goes out, against a real receiver: long schedules with units, an
 * endpoint's own schedule, the jitter, a restart in the middle of a wait, Retry-After, and 410
 * Gone. Waits of minutes or hours are read from the delivery (nextAttemptAt), not waited for.
 */

type Answer = (res: ServerResponse) => void;

const status =
  (code: number, headers: Record<string, string> = {}): Answer =>
  (res) =>
    res.writeHead(code, headers).end();

/**
 * A receiver whose paths answer in turn: the n-th request to a path gets that path's n-th answer
 * (the last one repeats); other paths answer 200.
 */
async function scriptedReceiver(): Promise<{ receiver: Receiver; script: (path: string, ...answers: Answer[]) => void }> {
  const receiver = await Receiver.start();
  const scripts = new Map<string, Answer[]>();
  const counts = new Map<string, number>();
  receiver.respondWith((request, res) => {
    const answers = scripts.get(request.path);
    const n = counts.get(request.path) ?? 0;
    counts.set(request.path, n + 1);
    if (!answers) return res.writeHead(200).end();
    answers[Math.min(n, answers.length - 1)](res);
  });
  return { receiver, script: (path, ...answers) => scripts.set(path, answers) };
}

/** The delay the retry policy chose after the last attempt: nextAttemptAt less the moment that attempt ended. */
// The delay runs from when the outcome was decided, which on a busy machine comes some ms after
// the attempt ended (where scheduledDelayMs measures from).
const DECISION_LAG_MS = 50;

function scheduledDelayMs(detail: DeliveryView): number {
  const last = detail.attempts![detail.attempts!.length - 1];
  return Date.parse(detail.nextAttemptAt!) - (Date.parse(last.startedAt) + last.durationMs);
}

/** Waits until the delivery has `attempts` recorded attempts and is waiting for the next one. */
function waitingAfter(t: TestApp, deliveryId: string, attempts: number, deadlineMs = 10_000): Promise<DeliveryView> {
  return eventually(
    () => delivery(t, deliveryId),
    (d) => d.status === 'pending' && d.attempts!.length === attempts && d.nextAttemptAt !== null,
    { deadlineMs, what: `delivery ${deliveryId} waiting after attempt ${attempts}` },
  );
}

async function onlyDelivery(t: TestApp, webhookId: string, eventId: string): Promise<DeliveryView> {
  const rows = await eventually(
    () => deliveriesOf(t, webhookId),
    (list) => list.some((r) => r.eventId === eventId),
  );
  return rows.find((r) => r.eventId === eventId)!;
}

function gaps(requests: ReceivedRequest[]): number[] {
  return requests.slice(1).map((request, i) => request.at - requests[i].at);
}

/** Allowance for a loaded machine on top of a scheduled time (never taken off it). */
const LATE_MS = 800;
/** A claim takes deliveries due within 20 ms, and clocks read a millisecond apart. */
const EARLY_MS = 25;

describe('RETRY_SCHEDULE_MS=0,5s,5m,30m,2h,5h,10h,10h (units, default jitter 0.1)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let script: (path: string, ...answers: Answer[]) => void;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,5s,5m,30m,2h,5h,10h,10h' } });
    ({ receiver, script } = await scriptedReceiver());
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('boots with it and waits about 5 s, then about 5 minutes, after failed attempts', async () => {
    expect(t.config.retryScheduleMs).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    script('/long', status(500));
    const webhook = await createWebhook(t, `${receiver.url}/long`);
    const event = await publish(t, 'order.created', orderData(1));
    const { id } = await onlyDelivery(t, webhook.id, event.id);

    const afterFirst = await waitingAfter(t, id, 1);
    expect(afterFirst.nextAttemptAt).toMatch(ISO_MS);
    expect(scheduledDelayMs(afterFirst)).toBeGreaterThanOrEqual(4_500);
    expect(scheduledDelayMs(afterFirst)).toBeLessThanOrEqual(5_500 + DECISION_LAG_MS);

    const [first, second] = await receiver.waitFor(2, (r) => r.path === '/long', 5_500 + 3_000);
    expect(second.at - first.at).toBeGreaterThanOrEqual(4_500 - EARLY_MS);
    expect(second.at - first.at).toBeLessThan(5_500 + LATE_MS);

    const afterSecond = await waitingAfter(t, id, 2);
    expect(afterSecond.attemptCount).toBe(2);
    expect(scheduledDelayMs(afterSecond)).toBeGreaterThanOrEqual(270_000);
    expect(scheduledDelayMs(afterSecond)).toBeLessThanOrEqual(330_000 + DECISION_LAG_MS);
  });

  it("follows an endpoint's own retrySchedule instead, and the deployment's again once it is set to null", async () => {
    script('/own', status(500));
    const webhook = await createWebhook(t, `${receiver.url}/own`, ['order.updated'], { retrySchedule: [0, 300, 300] });
    const event = await publish(t, 'order.updated', orderData(2));
    const requests = await receiver.waitFor(3, (r) => r.path === '/own');
    for (const gap of gaps(requests)) {
      expect(gap).toBeGreaterThanOrEqual(270 - EARLY_MS);
      expect(gap).toBeLessThan(330 + LATE_MS);
    }
    const done = await eventually(
      () => onlyDelivery(t, webhook.id, event.id),
      (d) => d.status === 'failed',
    );
    expect(done.attemptCount).toBe(3);

    const put = async (retrySchedule: number[] | null) =>
      expect(await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { retrySchedule } }), 200)).toMatchObject({
        retrySchedule,
      });
    await put([0, 60_000]);
    const minute = await publish(t, 'order.updated', orderData(3));
    const waitingMinute = await waitingAfter(t, (await onlyDelivery(t, webhook.id, minute.id)).id, 1);
    expect(scheduledDelayMs(waitingMinute)).toBeGreaterThanOrEqual(54_000);
    expect(scheduledDelayMs(waitingMinute)).toBeLessThanOrEqual(66_000 + DECISION_LAG_MS);

    await put(null);
    const deployment = await publish(t, 'order.updated', orderData(4));
    const waitingDeployment = await waitingAfter(t, (await onlyDelivery(t, webhook.id, deployment.id)).id, 1);
    expect(scheduledDelayMs(waitingDeployment)).toBeGreaterThanOrEqual(4_500);
    expect(scheduledDelayMs(waitingDeployment)).toBeLessThanOrEqual(5_500 + DECISION_LAG_MS);
  });
});

describe('RETRY_JITTER=0.5 with RETRY_SCHEDULE_MS=0,10s', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,10s', RETRY_JITTER: '0.5' } });
    receiver = await Receiver.start();
    receiver.respondStatus(500);
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('spreads the retries of 60 deliveries that failed together across 5 to 15 s', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/spread`);
    for (let batch = 0; batch < 6; batch++) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => publish(t, 'order.created', orderData(batch * 10 + i))));
    }
    // Each delivery's retry delay: when it is due, less when its first attempt ended.
    const delays = await eventually(
      async () =>
        (
          await t.db.query<{ delay: number }>(
            `SELECT extract(epoch FROM d.next_attempt_at - a.started_at) * 1000 - a.duration_ms AS delay
             FROM deliveries d JOIN delivery_attempts a ON a.delivery_id = d.id AND a.store_id = d.store_id AND a.number = 1
             WHERE d.webhook_id = $1 AND d.status = 'pending' AND d.lease_token IS NULL`,
            [webhook.id],
          )
        ).map((row) => Number(row.delay)),
      (rows) => rows.length === 60,
      { what: '60 first attempts recorded' },
    );
    const min = Math.min(...delays);
    const max = Math.max(...delays);
    // The delay counts from the retry decision, taken a little after the attempt ended (more so on a
    // busy machine), so the measured delay may exceed the drawn one by that gap, never fall short.
    expect(min).toBeGreaterThanOrEqual(5_000 - 5);
    expect(max).toBeLessThanOrEqual(15_000 + 100);
    // Uniform over ±50 %: 60 draws all above 7 s (or all below 13 s) would happen once in 600,000 runs.
    expect(min).toBeLessThan(7_000);
    expect(max).toBeGreaterThan(13_000);
    expect(new Set(delays.map((delay) => Math.round(delay / 100))).size).toBeGreaterThan(30);
  });
});

describe('a delivery waiting for its next attempt across a restart (RETRY_SCHEDULE_MS=0,3s, RETRY_JITTER=0)', () => {
  const env = { RETRY_SCHEDULE_MS: '0,3s', RETRY_JITTER: '0' };
  let db: TestDatabase;
  let receiver: Receiver;
  let script: (path: string, ...answers: Answer[]) => void;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    ({ receiver, script } = await scriptedReceiver());
  });

  afterAll(async () => {
    await receiver?.close();
    for (const app of apps) await app.close().catch(() => undefined);
    await db?.drop();
  });

  it('goes out about 3 s after the first attempt, from the app started in the meantime', async () => {
    const before = await startApp({ db, env });
    apps.push(before);
    script('/restart', status(503), status(200));
    const webhook = await createWebhook(before, `${receiver.url}/restart`);
    const event = await publish(before, 'order.created', orderData(1));
    const [first] = await receiver.waitFor(1, (r) => r.path === '/restart');
    const { id } = await onlyDelivery(before, webhook.id, event.id);
    await waitingAfter(before, id, 1);
    await before.close();
    apps.splice(apps.indexOf(before), 1);

    // Taken before the start: a new app may send the retry before its start has returned.
    const restartedAt = Date.now();
    const after = await startApp({ db, env });
    apps.push(after);
    const [, second] = await receiver.waitFor(2, (r) => r.path === '/restart', 6_000);
    expect(restartedAt).toBeLessThan(second.at);
    expect(second.headers['x-webhook-id']).toBe(event.id);
    expect(second.at - first.at).toBeGreaterThanOrEqual(3_000 - EARLY_MS);
    expect(second.at - first.at).toBeLessThan(3_000 + LATE_MS);
    const done = await eventually(
      () => delivery(after, id),
      (d) => d.status === 'succeeded',
    );
    expect(done.attempts!.map((a) => [a.number, a.statusCode])).toEqual([
      [1, 503],
      [2, 200],
    ]);
  });
});

describe('Retry-After and 410 Gone (RETRY_SCHEDULE_MS=0,200,200)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let script: (path: string, ...answers: Answer[]) => void;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,200' } });
    ({ receiver, script } = await scriptedReceiver());
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  /** Publishes to a new endpoint on `path` and returns its requests once `count` arrived, with the ended delivery. */
  async function deliverTo(path: string, count: number): Promise<{ requests: ReceivedRequest[]; detail: DeliveryView }> {
    const webhook = await createWebhook(t, `${receiver.url}${path}`);
    const event = await publish(t, 'order.created', orderData(1));
    const requests = await receiver.waitFor(count, (r) => r.path === path);
    const { id } = await onlyDelivery(t, webhook.id, event.id);
    const detail = await eventually(
      () => delivery(t, id),
      (d) => d.status !== 'pending',
    );
    return { requests, detail };
  }

  describe('Retry-After', () => {
    it('waits the 2 s a 429 asks for, notes it in the attempt log, then goes on with the schedule', async () => {
      script('/busy', status(429, { 'Retry-After': '2' }), status(500), status(200));
      const { requests, detail } = await deliverTo('/busy', 3);
      const [wait, next] = gaps(requests);
      expect(wait).toBeGreaterThanOrEqual(2_000 - EARLY_MS);
      expect(wait).toBeLessThan(2_000 + LATE_MS);
      expect(next).toBeGreaterThanOrEqual(180 - EARLY_MS);
      expect(next).toBeLessThan(220 + LATE_MS);
      expect(detail.attempts!.map((a) => [a.statusCode, a.error])).toEqual([
        [429, 'HTTP 429, Retry-After 2 s'],
        [500, 'HTTP 500'],
        [200, null],
      ]);
      expect(detail).toMatchObject({ status: 'succeeded', attemptCount: 3 });
    });

    it('waits until the HTTP date a 503 names', async () => {
      let retryAt = 0;
      script(
        '/unavailable',
        (res) => {
          // At least 2 s ahead, on a whole second as HTTP dates are.
          retryAt = (Math.floor(Date.now() / 1000) + 3) * 1000;
          res.writeHead(503, { 'Retry-After': new Date(retryAt).toUTCString() }).end();
        },
        status(200),
      );
      const { requests, detail } = await deliverTo('/unavailable', 2);
      expect(requests[1].at).toBeGreaterThanOrEqual(retryAt - EARLY_MS);
      expect(requests[1].at).toBeLessThan(retryAt + LATE_MS);
      expect(gaps(requests)[0]).toBeGreaterThanOrEqual(2_000 - EARLY_MS);
      expect(detail.attempts![0]).toMatchObject({
        statusCode: 503,
        error: expect.stringMatching(/^HTTP 503, Retry-After (2(\.\d)?|3) s$/),
      });
      expect(detail).toMatchObject({ status: 'succeeded', attemptCount: 2 });
    });

    it("ignores a 500's Retry-After", async () => {
      script('/broken', status(500, { 'Retry-After': '5' }), status(200));
      const { requests, detail } = await deliverTo('/broken', 2);
      expect(gaps(requests)[0]).toBeGreaterThanOrEqual(180 - EARLY_MS);
      expect(gaps(requests)[0]).toBeLessThan(220 + LATE_MS);
      expect(detail.attempts!.map((a) => [a.statusCode, a.error])).toEqual([
        [500, 'HTTP 500'],
        [200, null],
      ]);
    });
  });

  describe('410 Gone', () => {
    it('ends the delivery at once, disables the endpoint (gone) and ends its waiting deliveries; PUT isActive true clears it', async () => {
      // Three attempts a minute apart: any second attempt of these would still be waiting.
      const webhook = await createWebhook(t, `${receiver.url}/gone`, ['order.completed'], { retrySchedule: [0, 60_000, 60_000] });
      script('/gone', status(500), status(410));
      const waiting = await publish(t, 'order.completed', orderData(1));
      const waitingId = (await onlyDelivery(t, webhook.id, waiting.id)).id;
      await waitingAfter(t, waitingId, 1);

      const before = Date.now();
      const gone = await publish(t, 'order.completed', orderData(2));
      const goneId = (await onlyDelivery(t, webhook.id, gone.id)).id;
      const ended = await eventually(
        () => delivery(t, goneId),
        (d) => d.status !== 'pending',
        { deadlineMs: 5_000 },
      );
      expect(ended).toMatchObject({
        status: 'failed',
        attemptCount: 1,
        nextAttemptAt: null,
        lastStatusCode: 410,
        lastError: 'HTTP 410 Gone: no more attempts, and the endpoint is disabled',
      });
      expect(ended.attempts!.map((a) => a.statusCode)).toEqual([410]);

      const disabled = await eventually(
        async () =>
          expectJson<{ isActive: boolean; disabledReason: string | null; disabledAt: string | null }>(
            await t.api(`/webhooks/${webhook.id}`),
            200,
          ),
        (w) => !w.isActive,
      );
      expect(disabled).toMatchObject({ isActive: false, disabledReason: 'gone', disabledAt: expect.stringMatching(ISO_MS) });
      expect(Date.parse(disabled.disabledAt!)).toBeGreaterThanOrEqual(before - 5);
      expect(Date.parse(disabled.disabledAt!)).toBeLessThanOrEqual(Date.now());

      // The delivery that waited for its second attempt ends as for any inactive endpoint.
      expect(await delivery(t, waitingId)).toMatchObject({
        status: 'failed',
        attemptCount: 1,
        nextAttemptAt: null,
        lastError: 'endpoint is inactive; retry the delivery once it is active again',
      });
      expect((await publish(t, 'order.completed', orderData(3))).deliveries).toBe(0);
      expect(receiver.to('/gone')).toHaveLength(2);

      const enabled = await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: true } }), 200);
      expect(enabled).toMatchObject({ isActive: true, disabledReason: null, disabledAt: null });
      script('/gone', status(200));
      const again = await publish(t, 'order.completed', orderData(4));
      expect(again.deliveries).toBe(1);
      await eventually(
        async () => (await onlyDelivery(t, webhook.id, again.id)).status,
        (s) => s === 'succeeded',
      );
    });
  });
});

describe('RETRY_AFTER_MAX_MS=1500 (RETRY_SCHEDULE_MS=0,200,200)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let script: (path: string, ...answers: Answer[]) => void;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,200', RETRY_AFTER_MAX_MS: '1500' } });
    ({ receiver, script } = await scriptedReceiver());
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('caps a Retry-After of 60 s at 1.5 s and says so in the attempt log', async () => {
    script('/slow-down', status(429, { 'Retry-After': '60' }), status(200));
    const webhook = await createWebhook(t, `${receiver.url}/slow-down`);
    const event = await publish(t, 'order.created', orderData(1));
    const { id } = await onlyDelivery(t, webhook.id, event.id);
    const waiting = await waitingAfter(t, id, 1);
    expect(scheduledDelayMs(waiting)).toBeGreaterThanOrEqual(1_500 - 5);
    expect(scheduledDelayMs(waiting)).toBeLessThanOrEqual(1_500 + DECISION_LAG_MS);

    const requests = await receiver.waitFor(2, (r) => r.path === '/slow-down');
    expect(gaps(requests)[0]).toBeGreaterThanOrEqual(1_500 - EARLY_MS);
    expect(gaps(requests)[0]).toBeLessThan(1_500 + LATE_MS);
    const done = await eventually(
      () => delivery(t, id),
      (d) => d.status === 'succeeded',
    );
    expect(done.attempts!.map((a) => [a.statusCode, a.error])).toEqual([
      [429, 'HTTP 429, Retry-After 60 s (capped at 1.5 s)'],
      [200, null],
    ]);
  });
});
