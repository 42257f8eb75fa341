import { decideAfterAttempt } from './retry-policy';

const DEFAULT = [0, 1000, 4000];

describe('decideAfterAttempt', () => {
  it('ends a delivery as succeeded on success, whatever the attempt', () => {
    expect(decideAfterAttempt(true, 1, DEFAULT)).toEqual({ status: 'succeeded' });
    expect(decideAfterAttempt(true, 3, DEFAULT)).toEqual({ status: 'succeeded' });
  });

  it('retries 1 s after a failed first attempt and 4 s after a failed second one', () => {
    expect(decideAfterAttempt(false, 1, DEFAULT)).toEqual({ status: 'pending', delayMs: 1000 });
    expect(decideAfterAttempt(false, 2, DEFAULT)).toEqual({ status: 'pending', delayMs: 4000 });
  });

  it('marks the delivery failed after the last attempt of the schedule', () => {
    expect(decideAfterAttempt(false, 3, DEFAULT)).toEqual({ status: 'failed' });
  });

  it('still ends failed when an interrupted attempt pushed the count past the schedule', () => {
    expect(decideAfterAttempt(false, 4, DEFAULT)).toEqual({ status: 'failed' });
  });

  it('follows a custom schedule, including a single attempt', () => {
    expect(decideAfterAttempt(false, 1, [0])).toEqual({ status: 'failed' });
    expect(decideAfterAttempt(false, 1, [0, 50, 100, 200])).toEqual({ status: 'pending', delayMs: 50 });
    expect(decideAfterAttempt(false, 3, [0, 50, 100, 200])).toEqual({ status: 'pending', delayMs: 200 });
  });
});
