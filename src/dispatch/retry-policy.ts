/** What happens to a delivery after an attempt. */
export type RetryDecision = { status: 'succeeded' } | { status: 'pending'; delayMs: number } | { status: 'failed' };

/**
 * With RETRY_SCHEDULE_MS = [d1, d2, …, dn]: a cycle has n attempts, attempt k+1 goes
 * out d(k+1) ms after attempt k failed; after the n-th failure the delivery is `failed`.
 * `cycleAttempt` is the number (1-based) of the attempt just made in the current cycle.
 */
export function decideAfterAttempt(succeeded: boolean, cycleAttempt: number, scheduleMs: readonly number[]): RetryDecision {
  if (succeeded) return { status: 'succeeded' };
  if (cycleAttempt >= scheduleMs.length) return { status: 'failed' };
  return { status: 'pending', delayMs: scheduleMs[cycleAttempt] };
}
