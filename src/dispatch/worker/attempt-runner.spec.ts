import { INACTIVE_ENDPOINT_ERROR } from '../store/delivery.repository';
import { AttemptRunner, GONE_ERROR } from './attempt-runner';
import { UNREADABLE_SECRET_ERROR, UnreadableSecretError } from './secret-cache';
import type { SigningSecret } from '../sending/signature';
import type { ClaimedDelivery } from '../store/delivery.repository';
import type { SendRequest, SendResult } from '../sending/webhook-sender';
import { UNREADABLE_HEADERS_ERROR, type SendableHeaders } from '../../webhooks/webhooks.service';

const counter = () => ({ inc: jest.fn(), observe: jest.fn() });

function claimed(overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id: 'del_1',
    eventId: 'evt_1',
    webhookId: 'wh_1',
    storeId: 'st_default',
    eventType: 'order.created',
    attemptNumber: 1,
    cycleAttempt: 1,
    body: '{"id":"evt_1"}',
    url: 'https://example.test/hook',
    secretSealed: 'sealed',
    previousSecretSealed: null,
    headersRevision: null,
    retrySchedule: null,
    webhookActive: true,
    ordered: false,
    ...overrides,
  };
}

function answer(statusCode: number | null, error: string | null = null): SendResult {
  const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
  return { startedAt: new Date(), durationMs: 12, statusCode, error, responseBody: null, succeeded };
}

const secret = (text: string): SigningSecret => ({ text, key: Buffer.from(text) });

/** The endpoint's headers the cache answers for a claim with a revision (none without one). */
let endpointHeaders: SendableHeaders | undefined;
const headerCache = {
  headersOf: async (_webhookId: string, revision: string | null) => (revision === null ? { revision: '', headers: {} } : endpointHeaders),
};

describe('AttemptRunner', () => {
  let sent: SendRequest[];
  let next: SendResult;
  let gone: string[];
  let runner: AttemptRunner;

  beforeEach(() => {
    sent = [];
    gone = [];
    next = answer(200);
    const metrics = { deliveryAttempts: counter(), deliveryAttemptDuration: counter(), deliveriesFinished: counter() };
    runner = new AttemptRunner(
      { retryScheduleMs: [0, 1_000, 4_000], retryJitter: 0, retryAfterMaxMs: 60_000 },
      { send: async (request: SendRequest) => (sent.push(request), next) },
      { secretOf: (webhookId: string, sealed: string, which = 'current') => secret(`${which}:${webhookId}:${sealed}`) },
      headerCache,
      metrics as never,
      'lease-1',
      (webhookId) => gone.push(webhookId),
    );
  });

  it('sends the stored body with the endpoint’s secret and headers and marks a 2xx succeeded', async () => {
    endpointHeaders = { revision: 'r1', headers: { 'X-Store': 's1' } };
    const outcome = await runner.run(claimed({ headersRevision: 'r1' }));
    expect(sent).toEqual([
      {
        url: 'https://example.test/hook',
        eventId: 'evt_1',
        body: '{"id":"evt_1"}',
        secret: secret('current:wh_1:sealed'),
        previousSecret: undefined,
        headers: { 'X-Store': 's1' },
      },
    ]);
    expect(outcome).toMatchObject({ deliveryId: 'del_1', leaseToken: 'lease-1', status: 'succeeded', lastStatusCode: 200, ordered: false });
    expect(outcome.attempt).toMatchObject({ number: 1, trigger: 'scheduled', statusCode: 200, durationMs: 12 });
  });

  it('says whether the delivery was ordered, with an attempt or without, so that its end releases the next', async () => {
    expect(await runner.run(claimed({ ordered: true }))).toMatchObject({ status: 'succeeded', ordered: true });
    expect(await runner.run(claimed({ ordered: true, webhookActive: false }))).toMatchObject({ attempt: null, ordered: true });
  });

  it('with tracing on, sends the attempt span’s traceparent and ends the span with the decision', async () => {
    const ended: unknown[] = [];
    const started: unknown[] = [];
    const tracing = {
      startAttempt: (target: unknown) => {
        started.push(target);
        return { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', end: (attempt: unknown) => ended.push(attempt) };
      },
    };
    const metrics = { deliveryAttempts: counter(), deliveryAttemptDuration: counter(), deliveriesFinished: counter() };
    const traced = new AttemptRunner(
      { retryScheduleMs: [0, 1_000, 4_000], retryJitter: 0, retryAfterMaxMs: 60_000 },
      { send: async (request: SendRequest) => (sent.push(request), next) },
      { secretOf: () => secret('s') },
      headerCache,
      metrics as never,
      'lease-1',
      undefined,
      tracing,
    );
    next = answer(500, 'HTTP 500');
    await traced.run(claimed({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01', attemptNumber: 2 }));
    expect(started).toEqual([
      {
        parent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01',
        storeId: 'st_default',
        eventId: 'evt_1',
        eventType: 'order.created',
        endpointId: 'wh_1',
        deliveryId: 'del_1',
        attemptNumber: 2,
        url: 'https://example.test/hook',
      },
    ]);
    expect(sent[0].traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(ended).toEqual([
      { statusCode: 500, error: 'HTTP 500', durationMs: 12, succeeded: false, status: 'pending', retryDelayMs: 1_000 },
    ]);
  });

  it('schedules the next attempt of the cycle after a failure', async () => {
    next = answer(500, 'HTTP 500');
    const outcome = await runner.run(claimed({ cycleAttempt: 2, attemptNumber: 5 }));
    expect(outcome).toMatchObject({ status: 'pending', retryDelayMs: 4_000, lastError: 'HTTP 500' });
    expect(outcome.attempt).toMatchObject({ number: 5, trigger: 'scheduled' });
  });

  it('records the first attempt of a later cycle (a retry by hand) as manual', async () => {
    const outcome = await runner.run(claimed({ cycleAttempt: 1, attemptNumber: 4 }));
    expect(outcome.attempt).toMatchObject({ number: 4, trigger: 'manual' });
  });

  it('fails the delivery after the last attempt of the schedule', async () => {
    next = answer(null, 'connection refused');
    expect(await runner.run(claimed({ cycleAttempt: 3 }))).toMatchObject({ status: 'failed', retryDelayMs: 0 });
  });

  it('sends nothing to an endpoint made inactive and says so', async () => {
    const outcome = await runner.run(claimed({ webhookActive: false }));
    expect(sent).toEqual([]);
    expect(outcome).toMatchObject({ status: 'failed', attempt: null, lastError: INACTIVE_ENDPOINT_ERROR });
  });

  it('sends nothing to an endpoint deleted since the claim', async () => {
    endpointHeaders = undefined;
    const outcome = await runner.run(claimed({ headersRevision: 'r1' }));
    expect(sent).toEqual([]);
    expect(outcome).toMatchObject({ status: 'failed', attempt: null, lastError: INACTIVE_ENDPOINT_ERROR });
  });

  it('sends nothing when the sensitive headers do not decrypt, retries by the schedule and spares the endpoint', async () => {
    endpointHeaders = { revision: 'r1', headers: {}, error: UNREADABLE_HEADERS_ERROR };
    const outcome = await runner.run(claimed({ headersRevision: 'r1', cycleAttempt: 1 }));
    expect(sent).toEqual([]);
    expect(outcome).toMatchObject({ status: 'pending', retryDelayMs: 1_000, lastError: UNREADABLE_HEADERS_ERROR, sparesEndpoint: true });
    expect(outcome.attempt).toMatchObject({ number: 1, statusCode: null, error: UNREADABLE_HEADERS_ERROR });
  });

  it('signs with the previous secret too while a rotation overlaps', async () => {
    await runner.run(claimed({ previousSecretSealed: 'old' }));
    expect(sent[0]).toMatchObject({ secret: secret('current:wh_1:sealed'), previousSecret: secret('previous:wh_1:old') });
  });

  it('follows the endpoint’s own schedule over the deployment’s', async () => {
    next = answer(500, 'HTTP 500');
    expect(await runner.run(claimed({ retrySchedule: [0, 300_000, 7_200_000] }))).toMatchObject({
      status: 'pending',
      retryDelayMs: 300_000,
    });
    expect(await runner.run(claimed({ retrySchedule: [0], cycleAttempt: 1 }))).toMatchObject({ status: 'failed' });
  });

  it('waits what a Retry-After asks, capped, and says so in the attempt log', async () => {
    next = { ...answer(503, 'HTTP 503'), retryAfterMs: 2_000 };
    expect(await runner.run(claimed())).toMatchObject({ status: 'pending', retryDelayMs: 2_000, lastError: 'HTTP 503, Retry-After 2 s' });
    next = { ...answer(429, 'HTTP 429'), retryAfterMs: 7_200_000 };
    const capped = await runner.run(claimed());
    expect(capped).toMatchObject({ status: 'pending', retryDelayMs: 60_000, lastError: 'HTTP 429, Retry-After 7200 s (capped at 60 s)' });
    expect(capped.attempt?.error).toBe('HTTP 429, Retry-After 7200 s (capped at 60 s)');
  });

  it('ends the delivery at once on 410 Gone and reports the endpoint gone', async () => {
    next = answer(410, 'HTTP 410');
    const outcome = await runner.run(claimed({ cycleAttempt: 1 }));
    expect(outcome).toMatchObject({ status: 'failed', lastStatusCode: 410, lastError: GONE_ERROR });
    expect(gone).toEqual(['wh_1']);
  });

  it('gives a delivery that ends failed its webhook.delivery_failed event, and one still retried none', async () => {
    next = answer(500, 'HTTP 500');
    expect((await runner.run(claimed({ cycleAttempt: 1 }))).failureEvent).toBeUndefined();
    const { failureEvent } = await runner.run(claimed({ attemptNumber: 3, cycleAttempt: 3 }));
    expect(JSON.parse(failureEvent!.body)).toMatchObject({
      id: failureEvent!.id,
      type: 'webhook.delivery_failed',
      data: { deliveryId: 'del_1', webhookId: 'wh_1', eventId: 'evt_1', eventType: 'order.created', attemptCount: 3, lastStatusCode: 500 },
    });
  });

  describe('with a signing secret this process cannot decrypt', () => {
    /** A runner whose key opens every sealed secret but those in `unreadable`. */
    function runnerWithout(unreadable: string[]): AttemptRunner {
      const metrics = { deliveryAttempts: counter(), deliveryAttemptDuration: counter(), deliveriesFinished: counter() };
      return new AttemptRunner(
        { retryScheduleMs: [0, 1_000, 4_000], retryJitter: 0, retryAfterMaxMs: 60_000 },
        { send: async (request: SendRequest) => (sent.push(request), next) },
        {
          secretOf: (webhookId: string, sealed: string, which = 'current') => {
            if (unreadable.includes(sealed)) throw new UnreadableSecretError(webhookId);
            return secret(`${which}:${webhookId}:${sealed}`);
          },
        },
        headerCache,
        metrics as never,
        'lease-1',
      );
    }

    it('records a failed attempt that says why, sends nothing, and retries by the schedule', async () => {
      const outcome = await runnerWithout(['sealed']).run(claimed({ cycleAttempt: 1 }));
      expect(sent).toEqual([]);
      expect(outcome).toMatchObject({ status: 'pending', retryDelayMs: 1_000, lastStatusCode: null, lastError: UNREADABLE_SECRET_ERROR });
      expect(outcome.attempt).toMatchObject({ number: 1, statusCode: null, error: UNREADABLE_SECRET_ERROR });
      expect(UNREADABLE_SECRET_ERROR).toMatch(/SECRET_ENCRYPTION_KEY/);
    });

    it('fails the delivery after the last attempt, with its webhook.delivery_failed event, sparing the endpoint', async () => {
      const outcome = await runnerWithout(['sealed']).run(claimed({ attemptNumber: 3, cycleAttempt: 3 }));
      expect(outcome).toMatchObject({ status: 'failed', sparesEndpoint: true });
      expect(JSON.parse(outcome.failureEvent!.body)).toMatchObject({ data: { lastError: UNREADABLE_SECRET_ERROR, attemptCount: 3 } });
    });

    it('signs with the current secret alone when only the previous one does not decrypt', async () => {
      const outcome = await runnerWithout(['old']).run(claimed({ previousSecretSealed: 'old' }));
      expect(sent[0].secret).toEqual(secret('current:wh_1:sealed'));
      expect(sent[0].previousSecret).toBeUndefined();
      expect(outcome).toMatchObject({ status: 'succeeded' });
      expect(outcome.sparesEndpoint).toBeUndefined();
    });
  });

  it('tells nobody of a failed delivery of an operational event (no loop)', async () => {
    next = answer(500, 'HTTP 500');
    for (const eventType of ['webhook.delivery_failed', 'webhook.disabled']) {
      const outcome = await runner.run(claimed({ eventType, attemptNumber: 3, cycleAttempt: 3 }));
      expect(outcome).toMatchObject({ status: 'failed' });
      expect(outcome.failureEvent).toBeUndefined();
    }
  });

  describe('with MAX_ATTEMPTS_PER_DELIVERY', () => {
    function runnerAllowing(maxAttemptsPerDelivery: number): AttemptRunner {
      const metrics = { deliveryAttempts: counter(), deliveryAttemptDuration: counter(), deliveriesFinished: counter() };
      return new AttemptRunner(
        { retryScheduleMs: [0, 1_000, 4_000], retryJitter: 0, retryAfterMaxMs: 60_000, maxAttemptsPerDelivery },
        { send: async (request: SendRequest) => (sent.push(request), next) },
        { secretOf: (webhookId: string, sealed: string) => secret(`${webhookId}:${sealed}`) },
        headerCache,
        metrics as never,
        'lease-1',
      );
    }

    it('ends the delivery at its last allowed attempt although its cycle has retries left, saying why', async () => {
      next = answer(500, 'HTTP 500');
      // The second attempt of a manual retry's cycle, the fifth of the delivery's life.
      const outcome = await runnerAllowing(5).run(claimed({ attemptNumber: 5, cycleAttempt: 2 }));
      expect(sent).toHaveLength(1);
      expect(outcome).toMatchObject({ status: 'failed', retryDelayMs: 0, lastStatusCode: 500 });
      expect(outcome.lastError).toBe(
        'HTTP 500; no more attempts: a delivery is attempted at most 5 times (MAX_ATTEMPTS_PER_DELIVERY), manual retries included',
      );
      expect(outcome.attempt).toMatchObject({ number: 5, error: 'HTTP 500' });
      expect(JSON.parse(outcome.failureEvent!.body)).toMatchObject({ data: { attemptCount: 5, lastError: outcome.lastError } });
    });

    it('retries below it, and lets a success at it stand', async () => {
      next = answer(500, 'HTTP 500');
      expect(await runnerAllowing(5).run(claimed({ attemptNumber: 4, cycleAttempt: 1 }))).toMatchObject({ status: 'pending' });
      next = answer(204);
      expect(await runnerAllowing(5).run(claimed({ attemptNumber: 5, cycleAttempt: 2 }))).toMatchObject({ status: 'succeeded' });
    });

    it('sends nothing for a claim past it (an interrupted last attempt claimed again) and ends the delivery', async () => {
      const outcome = await runnerAllowing(5).run(claimed({ attemptNumber: 6, cycleAttempt: 3 }));
      expect(sent).toEqual([]);
      expect(outcome).toMatchObject({
        status: 'failed',
        attempt: null,
        lastError: expect.stringMatching(/^no more attempts: .* at most 5 times/),
      });
    });
  });
});
