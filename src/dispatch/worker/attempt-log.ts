import type { AttemptOutcome, ClaimedDelivery } from '../store/delivery.repository';

/**
 * The debug line of one attempt: which delivery, event and endpoint, what came back, and what
 * follows. Never the URL (its query may carry a token) nor the body.
 *
 *     delivery del_… (event evt_…) attempt 2 to wh_…: HTTP 503 in 120 ms; next attempt in 4000 ms
 */
export function describeAttempt(delivery: Pick<ClaimedDelivery, 'id' | 'eventId' | 'webhookId'>, outcome: AttemptOutcome): string {
  const what = `delivery ${delivery.id} (event ${delivery.eventId})`;
  const next =
    outcome.status === 'pending' ? `next attempt in ${outcome.retryDelayMs} ms` : outcome.status === 'succeeded' ? 'succeeded' : 'failed';
  const { attempt } = outcome;
  if (!attempt) return `${what} to ${delivery.webhookId}: not attempted (${outcome.lastError ?? 'no reason'}); ${next}`;
  const result = attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : (attempt.error ?? 'no answer');
  return `${what} attempt ${attempt.number} to ${delivery.webhookId}: ${result} in ${attempt.durationMs} ms; ${next}`;
}
