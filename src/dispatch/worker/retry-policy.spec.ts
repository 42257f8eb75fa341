import { attemptTrigger, decideAfterAttempt } from './retry-policy';

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

  it('spreads a delay by up to ± the jitter, evenly', () => {
    expect(decideAfterAttempt(false, 1, DEFAULT, { jitter: 0.1, random: () => 0 })).toEqual({ status: 'pending', delayMs: 900 });
    expect(decideAfterAttempt(false, 1, DEFAULT, { jitter: 0.1, random: () => 0.5 })).toEqual({ status: 'pending', delayMs: 1000 });
    expect(decideAfterAttempt(false, 2, DEFAULT, { jitter: 0.1, random: () => 0.999999 })).toEqual({ status: 'pending', delayMs: 4400 });
    const delays = Array.from(
      { length: 2000 },
      () => (decideAfterAttempt(false, 1, DEFAULT, { jitter: 0.2 }) as { delayMs: number }).delayMs,
    );
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(800);
    expect(Math.max(...delays)).toBeLessThanOrEqual(1200);
    // Spread over the whole range, not bunched: each fifth of it gets a share.
    for (let low = 800; low < 1200; low += 80) expect(delays.filter((d) => d >= low && d < low + 80).length).toBeGreaterThan(250);
  });

  it('waits at least what a Retry-After asked for, and no less than the schedule', () => {
    expect(decideAfterAttempt(false, 1, DEFAULT, { retryAfterMs: 2_000 })).toEqual({ status: 'pending', delayMs: 2_000 });
    expect(decideAfterAttempt(false, 2, DEFAULT, { retryAfterMs: 2_000 })).toEqual({ status: 'pending', delayMs: 4_000 });
    expect(decideAfterAttempt(false, 3, DEFAULT, { retryAfterMs: 2_000 })).toEqual({ status: 'failed' });
  });
});

describe('attemptTrigger', () => {
  it('calls the first attempt of a delivery and every retry of a schedule scheduled', () => {
    expect(attemptTrigger(1, 1)).toBe('scheduled');
    expect(attemptTrigger(2, 2)).toBe('scheduled');
    expect(attemptTrigger(6, 3)).toBe('scheduled');
  });

  it('calls the first attempt of any later cycle, which only a retry by hand starts, manual', () => {
    expect(attemptTrigger(4, 1)).toBe('manual');
    expect(attemptTrigger(2, 1)).toBe('manual');
  });
});
