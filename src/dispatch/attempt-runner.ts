import type { AppConfig } from '../config/app-config';
import type { Metrics } from '../observability/metrics';
import { INACTIVE_ENDPOINT_ERROR, type AttemptOutcome, type ClaimedDelivery } from './delivery.repository';
import { decideAfterAttempt } from './retry-policy';
import type { SecretCache } from './secret-cache';
import type { SendResult, WebhookSender } from './webhook-sender';

/**
 * One attempt of a claimed delivery: sign and send it (WebhookSender), then decide what follows
 * (retry policy). The outcome is returned, not written: OutcomeRecorder writes it.
 */
export class AttemptRunner {
  constructor(
    private readonly config: Pick<AppConfig, 'retryScheduleMs'>,
    private readonly sender: Pick<WebhookSender, 'send'>,
    private readonly secrets: Pick<SecretCache, 'secretOf'>,
    private readonly metrics: Pick<Metrics, 'deliveryAttempts' | 'deliveryAttemptDuration' | 'deliveriesFinished'>,
    private readonly leaseToken: string,
  ) {}

  async run(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    if (!delivery.webhookActive) {
      // Made inactive after the claim was queued: no request, the delivery ends as for any inactive endpoint.
      return {
        deliveryId: delivery.id,
        leaseToken: this.leaseToken,
        attempt: null,
        status: 'failed',
        retryDelayMs: 0,
        decidedAt: Date.now(),
        lastStatusCode: null,
        lastError: INACTIVE_ENDPOINT_ERROR,
      };
    }
    const result = await this.sender.send({
      url: delivery.url,
      eventId: delivery.eventId,
      body: delivery.body,
      secret: this.secrets.secretOf(delivery.webhookId, delivery.secretSealed),
    });
    this.metrics.deliveryAttempts.inc({ outcome: result.succeeded ? 'success' : 'failure' });
    this.metrics.deliveryAttemptDuration.observe(result.durationMs / 1000);
    const decision = decideAfterAttempt(result.succeeded, delivery.cycleAttempt, this.config.retryScheduleMs);
    if (decision.status !== 'pending') this.metrics.deliveriesFinished.inc({ status: decision.status });
    return outcomeOf(
      { deliveryId: delivery.id, leaseToken: this.leaseToken, attemptNumber: delivery.attemptNumber },
      result,
      decision.status,
      decision.status === 'pending' ? decision.delayMs : 0,
    );
  }
}

/** An attempt's result and the decision taken on it, as DeliveryRepository.recordOutcomes writes them. */
export function outcomeOf(
  claim: { deliveryId: string; leaseToken: string; attemptNumber: number },
  result: SendResult,
  status: AttemptOutcome['status'],
  retryDelayMs: number,
): AttemptOutcome {
  return {
    deliveryId: claim.deliveryId,
    leaseToken: claim.leaseToken,
    attempt: {
      number: claim.attemptNumber,
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      error: result.error,
      responseBody: result.responseBody,
    },
    status,
    retryDelayMs,
    decidedAt: Date.now(),
    lastStatusCode: result.statusCode,
    lastError: result.error,
  };
}
