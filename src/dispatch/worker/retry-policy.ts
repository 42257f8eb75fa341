import type { AttemptTrigger } from '../store/delivery-attempt.entity';

/** What happens to a delivery after an attempt. */
export type RetryDecision = { status: 'succeeded' } | { status: 'pending'; delayMs: number } | { status: 'failed' };

export interface RetryOptions {
  /** Each delay is spread by up to ± this fraction of itself. */
  jitter?: number;
  /** The wait a receiver's Retry-After asked for, already capped: the delay is at least this. */
  retryAfterMs?: number;
  /** A number in [0, 1) (tests pass their own). */
  random?: () => number;
}

/**
 * With a schedule [d1, d2, …, dn]: a cycle has n attempts, attempt k+1 goes out about d(k+1) ms
 * after attempt k failed (spread by the jitter, and no sooner than a Retry-After asked); after the
 * n-th failure the delivery is `failed`. `cycleAttempt` is the number (1-based) of the attempt
 * just made in the current cycle.
 */
export function decideAfterAttempt(
  succeeded: boolean,
  cycleAttempt: number,
  scheduleMs: readonly number[],
  options: RetryOptions = {},
): RetryDecision {
  if (succeeded) return { status: 'succeeded' };
  if (cycleAttempt >= scheduleMs.length) return { status: 'failed' };
  const scheduled = scheduleMs[cycleAttempt];
  const jitter = options.jitter ?? 0;
  const spread = jitter > 0 ? Math.round(scheduled * jitter * (2 * (options.random ?? Math.random)() - 1)) : 0;
  return { status: 'pending', delayMs: Math.max(scheduled + spread, options.retryAfterMs ?? 0) };
}

/**
 * What started an attempt, from its number over the delivery's life and in its cycle: a cycle
 * other than the first one begins with a person's retry.
 */
export function attemptTrigger(attemptNumber: number, cycleAttempt: number): AttemptTrigger {
  return cycleAttempt === 1 && attemptNumber > 1 ? 'manual' : 'scheduled';
}
