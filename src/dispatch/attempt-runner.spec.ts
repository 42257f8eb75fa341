import { INACTIVE_ENDPOINT_ERROR } from './delivery.repository';
import { AttemptRunner } from './attempt-runner';
import type { ClaimedDelivery } from './delivery.repository';
import type { SendRequest, SendResult } from './webhook-sender';

const counter = () => ({ inc: jest.fn(), observe: jest.fn() });

function claimed(overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id: 'del_1',
    eventId: 'evt_1',
    webhookId: 'wh_1',
    attemptNumber: 1,
    cycleAttempt: 1,
    body: '{"id":"evt_1"}',
    url: 'https://example.test/hook',
    secretSealed: 'sealed',
    webhookActive: true,
    lockedCount: 1,
    ...overrides,
  };
}

function answer(statusCode: number | null, error: string | null = null): SendResult {
  const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
  return { startedAt: new Date(), durationMs: 12, statusCode, error, responseBody: null, succeeded };
}

describe('AttemptRunner', () => {
  let sent: SendRequest[];
  let next: SendResult;
  let runner: AttemptRunner;

  beforeEach(() => {
    sent = [];
    next = answer(200);
    const metrics = { deliveryAttempts: counter(), deliveryAttemptDuration: counter(), deliveriesFinished: counter() };
    runner = new AttemptRunner(
      { retryScheduleMs: [0, 1_000, 4_000] },
      { send: async (request: SendRequest) => (sent.push(request), next) },
      { secretOf: (webhookId: string, sealed: string) => `secret:${webhookId}:${sealed}` },
      metrics as never,
      'lease-1',
    );
  });

  it('sends the stored body with the endpoint’s secret and marks a 2xx succeeded', async () => {
    const outcome = await runner.run(claimed());
    expect(sent).toEqual([{ url: 'https://example.test/hook', eventId: 'evt_1', body: '{"id":"evt_1"}', secret: 'secret:wh_1:sealed' }]);
    expect(outcome).toMatchObject({ deliveryId: 'del_1', leaseToken: 'lease-1', status: 'succeeded', lastStatusCode: 200 });
    expect(outcome.attempt).toMatchObject({ number: 1, statusCode: 200, durationMs: 12 });
  });

  it('schedules the next attempt of the cycle after a failure', async () => {
    next = answer(500, 'HTTP 500');
    const outcome = await runner.run(claimed({ cycleAttempt: 2, attemptNumber: 5 }));
    expect(outcome).toMatchObject({ status: 'pending', retryDelayMs: 4_000, lastError: 'HTTP 500' });
    expect(outcome.attempt?.number).toBe(5);
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
});
