import type { AppConfig } from '../../config/app-config';
import type { Metrics } from '../../observability/metrics';
import type { AttemptSpan, Tracing } from '../../observability/tracing';
import { INACTIVE_ENDPOINT_ERROR, type AttemptOutcome, type ClaimedDelivery } from '../store/delivery.repository';
import { deliveryFailedEvent } from '../../catalogue/operational-events';
import type { HeaderCache } from './header-cache';
import { attemptTrigger, decideAfterAttempt, type RetryDecision } from './retry-policy';
import { UNREADABLE_SECRET_ERROR, UnreadableSecretError, type SecretCache } from './secret-cache';
import type { SigningSecret } from '../sending/signature';
import type { SendRequest, SendResult, WebhookSender } from '../sending/webhook-sender';

/** The error of an attempt answered 410 Gone: the receiver says the endpoint is gone for good. */
export const GONE_ERROR = 'HTTP 410 Gone: no more attempts, and the endpoint is disabled';

/** Why a delivery ended at MAX_ATTEMPTS_PER_DELIVERY (added to its last attempt's error). */
export function attemptsExhaustedError(maxAttempts: number): string {
  return `no more attempts: a delivery is attempted at most ${maxAttempts} times (MAX_ATTEMPTS_PER_DELIVERY), manual retries included`;
}

/**
 * One attempt of a claimed delivery: sign and send it (WebhookSender), then decide what follows
 * (retry policy: the endpoint's schedule or the deployment's, the jitter, a Retry-After). The
 * outcome is returned, not written: OutcomeRecorder writes it. A 410 Gone ends the delivery and
 * calls `onGone`, which disables the endpoint. A delivery that ends `failed` after its attempt
 * carries its webhook.delivery_failed event (unless it carried an operational event itself).
 * Whatever the schedule, a delivery's attempt number MAX_ATTEMPTS_PER_DELIVERY is its last
 * (unset: no such limit), so no loop through the API can go on (docs/reliability.md).
 */
export class AttemptRunner {
  constructor(
    private readonly config: Pick<AppConfig, 'retryScheduleMs' | 'retryJitter' | 'retryAfterMaxMs'> &
      Partial<Pick<AppConfig, 'maxAttemptsPerDelivery'>>,
    private readonly sender: Pick<WebhookSender, 'send'>,
    private readonly secrets: Pick<SecretCache, 'secretOf'>,
    private readonly headers: Pick<HeaderCache, 'headersOf'>,
    private readonly metrics: Pick<Metrics, 'deliveryAttempts' | 'deliveryAttemptDuration' | 'deliveriesFinished'>,
    private readonly leaseToken: string,
    private readonly onGone: (webhookId: string) => void = () => undefined,
    private readonly tracing?: Pick<Tracing, 'startAttempt'>,
  ) {}

  async run(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    // Claimed again after its last attempt was interrupted (or the limit was lowered): no request.
    if (delivery.attemptNumber > this.maxAttempts) return this.ended(delivery, attemptsExhaustedError(this.maxAttempts));
    const headers = delivery.webhookActive ? await this.headers.headersOf(delivery.webhookId, delivery.headersRevision) : undefined;
    // Made inactive (or deleted) after the claim was queued: no request, the delivery ends as for any inactive endpoint.
    if (!headers) return this.ended(delivery, INACTIVE_ENDPOINT_ERROR);
    const secrets = headers.error ? undefined : this.secretsOf(delivery);
    if (!secrets) return this.unsigned(delivery, headers.error);
    const span = this.tracing?.startAttempt({
      parent: delivery.traceparent ?? null,
      storeId: delivery.storeId,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      endpointId: delivery.webhookId,
      deliveryId: delivery.id,
      attemptNumber: delivery.attemptNumber,
      url: delivery.url,
    });
    const result = await this.sender.send({
      url: delivery.url,
      eventId: delivery.eventId,
      body: delivery.body,
      ...secrets,
      headers: headers.headers,
      access: headers.access,
      traceparent: span?.traceparent,
    });
    this.metrics.deliveryAttempts.inc({ outcome: result.succeeded ? 'success' : 'failure' });
    this.metrics.deliveryAttemptDuration.observe(result.durationMs / 1000);
    let decision: RetryDecision;
    if (result.statusCode === 410) {
      decision = { status: 'failed' };
      result.error = GONE_ERROR;
      this.onGone(delivery.webhookId);
    } else {
      const retryAfterMs = result.retryAfterMs === undefined ? undefined : Math.min(result.retryAfterMs, this.config.retryAfterMaxMs);
      decision = decideAfterAttempt(result.succeeded, delivery.cycleAttempt, delivery.retrySchedule ?? this.config.retryScheduleMs, {
        jitter: this.config.retryJitter,
        retryAfterMs,
      });
      if (retryAfterMs !== undefined) result.error = `${result.error}, Retry-After ${describeWait(result.retryAfterMs!, retryAfterMs)}`;
    }
    const outcome = this.decided(delivery, result, decision);
    if (span) endSpan(span, result, outcome);
    return outcome;
  }

  private get maxAttempts(): number {
    return this.config.maxAttemptsPerDelivery ?? Infinity;
  }

  /** The outcome of an attempt made; a retry the schedule wants past the last attempt allowed ends the delivery instead. */
  private decided(delivery: ClaimedDelivery, result: SendResult, scheduled: RetryDecision): AttemptOutcome {
    const exhausted = scheduled.status === 'pending' && delivery.attemptNumber >= this.maxAttempts;
    const decision: RetryDecision = exhausted ? { status: 'failed' } : scheduled;
    if (decision.status !== 'pending') this.metrics.deliveriesFinished.inc({ status: decision.status });
    const outcome = outcomeOf(
      {
        deliveryId: delivery.id,
        leaseToken: this.leaseToken,
        attemptNumber: delivery.attemptNumber,
        cycleAttempt: delivery.cycleAttempt,
        ordered: delivery.ordered,
      },
      result,
      decision.status,
      decision.status === 'pending' ? decision.delayMs : 0,
    );
    if (exhausted) outcome.lastError = `${result.error}; ${attemptsExhaustedError(this.maxAttempts)}`;
    if (decision.status === 'failed') outcome.failureEvent = deliveryFailedEvent(delivery, { ...result, error: outcome.lastError });
    return outcome;
  }

  /** Ends a claimed delivery without a request. */
  private ended(delivery: ClaimedDelivery, lastError: string): AttemptOutcome {
    return {
      deliveryId: delivery.id,
      leaseToken: this.leaseToken,
      ordered: delivery.ordered,
      attempt: null,
      status: 'failed',
      retryDelayMs: 0,
      decidedAt: Date.now(),
      lastStatusCode: null,
      lastError,
    };
  }

  /**
   * The secrets to sign with, or undefined when the current one does not decrypt with this
   * process's key. A previous secret that does not decrypt is left out: the current one still
   * signs, so rotating an unreadable secret mends the endpoint at once.
   */
  private secretsOf(delivery: ClaimedDelivery): Pick<SendRequest, 'secret' | 'previousSecret'> | undefined {
    let secret: SigningSecret;
    try {
      secret = this.secrets.secretOf(delivery.webhookId, delivery.secretSealed);
    } catch (error) {
      if (error instanceof UnreadableSecretError) return undefined;
      throw error;
    }
    if (!delivery.previousSecretSealed) return { secret };
    try {
      return { secret, previousSecret: this.secrets.secretOf(delivery.webhookId, delivery.previousSecretSealed, 'previous') };
    } catch (error) {
      if (error instanceof UnreadableSecretError) return { secret };
      throw error;
    }
  }

  /**
   * A delivery that cannot be signed (or whose sensitive headers, `error`, cannot be opened): a
   * failed attempt with no request, decided by the schedule like any failure, that does not count
   * against the endpoint's health (the fault is Hookline's key, not the receiver).
   */
  private unsigned(delivery: ClaimedDelivery, error?: string): AttemptOutcome {
    const result = unsignedAttempt(error);
    this.metrics.deliveryAttempts.inc({ outcome: 'failure' });
    const decision = decideAfterAttempt(false, delivery.cycleAttempt, delivery.retrySchedule ?? this.config.retryScheduleMs, {
      jitter: this.config.retryJitter,
    });
    const outcome = this.decided(delivery, result, decision);
    outcome.sparesEndpoint = true;
    return outcome;
  }
}

/** The result of an attempt that sent nothing because the endpoint's signing secret (or `error`) does not decrypt. */
export function unsignedAttempt(error = UNREADABLE_SECRET_ERROR): SendResult {
  return { startedAt: new Date(), durationMs: 0, statusCode: null, error, responseBody: null, succeeded: false };
}

/** An attempt's result and the decision taken on it, as DeliveryRepository.recordOutcomes writes them. */
export function outcomeOf(
  claim: { deliveryId: string; leaseToken: string; attemptNumber: number; cycleAttempt: number; ordered?: boolean },
  result: SendResult,
  status: AttemptOutcome['status'],
  retryDelayMs: number,
): AttemptOutcome {
  return {
    deliveryId: claim.deliveryId,
    leaseToken: claim.leaseToken,
    ordered: claim.ordered,
    attempt: {
      number: claim.attemptNumber,
      trigger: attemptTrigger(claim.attemptNumber, claim.cycleAttempt),
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

/** Ends an attempt's span with its result and what was decided after it. */
function endSpan(span: AttemptSpan, result: SendResult, outcome: AttemptOutcome): void {
  span.end({
    statusCode: result.statusCode,
    error: outcome.lastError,
    durationMs: result.durationMs,
    succeeded: result.succeeded,
    status: outcome.status,
    retryDelayMs: outcome.retryDelayMs,
  });
}

/** How a Retry-After reads in the attempt log: `2 s`, or `7200 s (capped at 3600 s)`. */
function describeWait(askedMs: number, cappedMs: number): string {
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  return askedMs > cappedMs ? `${seconds(askedMs)} (capped at ${seconds(cappedMs)})` : seconds(askedMs);
}
