import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { isDatabaseUnavailable } from '../common/database-errors';
import { PgNotifier } from '../database/pg-notifier';
import { Metrics } from '../observability/metrics';
import { SecretCipher } from '../webhooks/secret-cipher';
import { INACTIVE_ENDPOINT_ERROR } from '../webhooks/webhook.repository';
import { AttemptOutcome, ClaimedDelivery, DeliveryRepository, EndpointLimits } from './delivery.repository';
import { decideAfterAttempt } from './retry-policy';
import { SendResult, WebhookSender } from './webhook-sender';

/** Channel on which a commit that created due work wakes every worker. */
export const DELIVERIES_CHANNEL = 'hookline_deliveries';

const CLAIM_BATCH = 500;
const FLUSH_BATCH = 500;
const FLUSH_DELAY_MS = 5;
const LEASE_MARGIN_MS = 30_000;
const MAX_BACKOFF_MS = 5_000;

/**
 * The delivery worker of one process. It claims due deliveries in batches, sends each one, and
 * writes attempts and decisions back in batches.
 *
 * - New work is picked up within milliseconds: publishes NOTIFY on commit.
 * - Retries fire on time: after every claim the worker sets a timer for the next due delivery,
 *   and a retry it schedules itself sets one directly; the one-second sweep is only a safety net.
 * - A slow or dead endpoint never delays the others: it gets at most ENDPOINT_CONCURRENCY slots of
 *   DISPATCH_CONCURRENCY, and the claim leaves its deliveries alone while they are all taken.
 * - Each claim is leased for one attempt's time limit plus a margin; a crashed worker's claims
 *   come back when the lease ends.
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Dispatcher.name);
  private readonly leaseMs: number;
  private readonly inFlightByEndpoint = new Map<string, number>();
  private readonly inFlight = new Map<string, ClaimedDelivery>();
  private readonly secrets = new Map<string, { sealed: string; secret: string }>();
  private readonly sends = new Set<Promise<void>>();
  private outcomes: AttemptOutcome[] = [];
  private running = false;
  private claiming = false;
  private claimRequested = false;
  private workWaiting = false;
  private dueTimer?: NodeJS.Timeout;
  private dueAt = Number.POSITIVE_INFINITY;
  private flushTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private backoffMs = 0;
  private readonly leaseToken = randomUUID();

  constructor(
    private readonly config: AppConfig,
    private readonly deliveries: DeliveryRepository,
    private readonly sender: WebhookSender,
    private readonly cipher: SecretCipher,
    private readonly notifier: PgNotifier,
    private readonly metrics: Metrics,
  ) {
    this.leaseMs = config.deliveryTimeoutMs + LEASE_MARGIN_MS;
  }

  onApplicationBootstrap(): void {
    if (!this.config.runsWorker) return;
    this.running = true;
    this.notifier.listen(DELIVERIES_CHANNEL, () => this.wake());
    this.notifier.onReconnect(() => this.wake());
    this.wake();
  }

  /** Stop claiming, let in-flight attempts finish (or give their claims back), write everything. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.dueTimer);
    const drained = Promise.all([...this.sends]);
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), this.config.shutdownTimeoutMs).unref()),
    ]);
    await this.flush();
    if (timedOut && this.inFlight.size > 0) {
      const ids = [...this.inFlight.keys()];
      this.logger.warn(`shutdown: giving back ${ids.length} unfinished claims`);
      await this.deliveries.releaseLeases(ids, this.leaseToken).catch((error: unknown) => {
        this.logger.warn(`could not give claims back (they return when their lease ends): ${String(error)}`);
      });
    }
  }

  /** Asks for a claim round as soon as possible (coalesced). */
  wake(): void {
    if (!this.running) return;
    if (this.claiming) {
      this.claimRequested = true;
      return;
    }
    this.claiming = true;
    void this.claimRounds().finally(() => (this.claiming = false));
  }

  /** The safety net's entry (DispatchSweeper): lost notifications, expired leases. */
  get isRunning(): boolean {
    return this.running;
  }

  get leaseDurationMs(): number {
    return this.leaseMs;
  }

  private async claimRounds(): Promise<void> {
    try {
      do {
        this.claimRequested = false;
        const room = this.config.dispatchConcurrency - this.inFlight.size;
        if (room <= 0) {
          this.workWaiting = true;
          break;
        }
        const limit = Math.min(room, CLAIM_BATCH);
        const claimed = await this.deliveries.claimDue(limit, this.leaseMs, this.leaseToken, this.endpointLimits());
        for (const delivery of claimed) this.start(delivery);
        if (claimed.length === limit) this.claimRequested = true;
      } while (this.claimRequested && this.running);
      this.backoffMs = 0;
      await this.scheduleNextDue();
    } catch (error) {
      this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 100), MAX_BACKOFF_MS);
      const reason = isDatabaseUnavailable(error) ? 'database unavailable' : String(error);
      this.logger.warn(`claim failed (${reason}); retrying in ${this.backoffMs} ms`);
      this.setDueTimer(Date.now() + this.backoffMs);
    }
  }

  private endpointLimits(): EndpointLimits {
    const limits: EndpointLimits = { excluded: [], partial: [], perEndpoint: this.config.endpointConcurrency };
    for (const [webhookId, count] of this.inFlightByEndpoint) {
      const available = this.config.endpointConcurrency - count;
      if (available <= 0) limits.excluded.push(webhookId);
      else limits.partial.push({ webhookId, available });
    }
    return limits;
  }

  private async scheduleNextDue(): Promise<void> {
    const next = await this.deliveries.nextDueAt();
    if (next) this.setDueTimer(next.getTime());
  }

  /** Keeps one timer, for the earliest moment known to have work. */
  private setDueTimer(at: number): void {
    if (!this.running || at >= this.dueAt) return;
    clearTimeout(this.dueTimer);
    this.dueAt = at;
    // A couple of milliseconds late rather than early: early finds nothing due yet.
    this.dueTimer = setTimeout(() => {
      this.dueAt = Number.POSITIVE_INFINITY;
      this.wake();
    }, Math.max(0, at - Date.now() + 2));
  }

  private start(delivery: ClaimedDelivery): void {
    this.inFlight.set(delivery.id, delivery);
    this.inFlightByEndpoint.set(delivery.webhookId, (this.inFlightByEndpoint.get(delivery.webhookId) ?? 0) + 1);
    const send = this.attempt(delivery)
      .then((outcome) => this.record(outcome))
      .catch((error: unknown) => this.logger.error({ err: error }, `delivery ${delivery.id} failed unexpectedly`))
      .finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (this.inFlightByEndpoint.get(delivery.webhookId) ?? 1) - 1;
        if (left > 0) this.inFlightByEndpoint.set(delivery.webhookId, left);
        else this.inFlightByEndpoint.delete(delivery.webhookId);
        this.sends.delete(send);
        if (this.workWaiting || left === this.config.endpointConcurrency - 1) {
          this.workWaiting = false;
          this.wake();
        }
      });
    this.sends.add(send);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const decidedAt = (): number => Date.now();
    if (!delivery.webhookActive) {
      return {
        deliveryId: delivery.id,
        leaseToken: delivery.leaseToken,
        attempt: null,
        status: 'failed',
        retryDelayMs: 0,
        decidedAt: decidedAt(),
        lastStatusCode: null,
        lastError: INACTIVE_ENDPOINT_ERROR,
      };
    }
    const result = await this.sender.send({
      url: delivery.url,
      eventId: delivery.eventId,
      body: delivery.body,
      secret: this.secretOf(delivery),
    });
    this.metrics.deliveryAttempts.inc({ outcome: result.succeeded ? 'success' : 'failure' });
    this.metrics.deliveryAttemptDuration.observe(result.durationMs / 1000);
    const decision = decideAfterAttempt(result.succeeded, delivery.cycleAttempt, this.config.retryScheduleMs);
    if (decision.status !== 'pending') this.metrics.deliveriesFinished.inc({ status: decision.status });
    return toOutcome(delivery, result, decision.status, decision.status === 'pending' ? decision.delayMs : 0, decidedAt());
  }

  private secretOf(delivery: ClaimedDelivery): string {
    const cached = this.secrets.get(delivery.webhookId);
    if (cached && cached.sealed === delivery.secretSealed) return cached.secret;
    const secret = this.cipher.decrypt(delivery.secretSealed, delivery.webhookId);
    this.secrets.set(delivery.webhookId, { sealed: delivery.secretSealed, secret });
    return secret;
  }

  private record(outcome: AttemptOutcome): void {
    this.outcomes.push(outcome);
    if (outcome.status === 'pending') this.setDueTimer(outcome.decidedAt + outcome.retryDelayMs);
    if (this.outcomes.length >= FLUSH_BATCH) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes buffered outcomes; on a database error keeps them and tries again with backoff. */
  private async flush(): Promise<void> {
    if (this.flushing) {
      await this.flushing;
      if (this.outcomes.length === 0) return;
    }
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.outcomes;
    if (batch.length === 0) return;
    this.outcomes = [];
    this.flushing = this.deliveries
      .recordOutcomes(batch)
      .catch((error: unknown) => {
        this.outcomes = batch.concat(this.outcomes);
        this.logger.warn(`could not record ${batch.length} outcomes (${String(error)}); retrying`);
        this.flushTimer ??= setTimeout(() => void this.flush(), 500);
      })
      .finally(() => (this.flushing = undefined));
    await this.flushing;
  }
}

function toOutcome(
  delivery: ClaimedDelivery,
  result: SendResult,
  status: AttemptOutcome['status'],
  retryDelayMs: number,
  decidedAt: number,
): AttemptOutcome {
  return {
    deliveryId: delivery.id,
    leaseToken: delivery.leaseToken,
    attempt: {
      number: delivery.attemptNumber,
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      error: result.error,
      responseBody: result.responseBody,
    },
    status,
    retryDelayMs,
    decidedAt,
    lastStatusCode: result.statusCode,
    lastError: result.error,
  };
}
