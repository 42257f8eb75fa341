import type { AttemptOutcome } from '../store/delivery.repository';
import { describeAttempt } from './attempt-log';

const delivery = { id: 'del_1', eventId: 'evt_1', webhookId: 'wh_1' };

function outcome(overrides: Partial<AttemptOutcome>, attempt: Partial<NonNullable<AttemptOutcome['attempt']>> | null = {}): AttemptOutcome {
  return {
    deliveryId: 'del_1',
    leaseToken: 'lease',
    attempt:
      attempt === null
        ? null
        : {
            number: 1,
            trigger: 'scheduled',
            startedAt: new Date(0),
            durationMs: 12,
            statusCode: 200,
            error: null,
            responseBody: 'secret body',
            ...attempt,
          },
    status: 'succeeded',
    retryDelayMs: 0,
    decidedAt: 0,
    lastStatusCode: 200,
    lastError: null,
    ...overrides,
  };
}

describe('describeAttempt', () => {
  it('tells a success', () => {
    expect(describeAttempt(delivery, outcome({}))).toBe('delivery del_1 (event evt_1) attempt 1 to wh_1: HTTP 200 in 12 ms; succeeded');
  });

  it('tells a failure and when the next attempt is due', () => {
    expect(describeAttempt(delivery, outcome({ status: 'pending', retryDelayMs: 4000 }, { number: 2, statusCode: 503 }))).toBe(
      'delivery del_1 (event evt_1) attempt 2 to wh_1: HTTP 503 in 12 ms; next attempt in 4000 ms',
    );
  });

  it('tells an attempt without an answer by its error, and the last one as failed', () => {
    const line = describeAttempt(delivery, outcome({ status: 'failed' }, { number: 3, statusCode: null, error: 'connection refused' }));
    expect(line).toBe('delivery del_1 (event evt_1) attempt 3 to wh_1: connection refused in 12 ms; failed');
  });

  it('tells a delivery ended without an attempt, and never shows the response body', () => {
    const line = describeAttempt(delivery, outcome({ status: 'failed', lastError: 'endpoint is inactive' }, null));
    expect(line).toBe('delivery del_1 (event evt_1) to wh_1: not attempted (endpoint is inactive); failed');
    expect(describeAttempt(delivery, outcome({}))).not.toContain('secret body');
  });
});
