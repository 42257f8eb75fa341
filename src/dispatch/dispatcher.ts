import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { isDatabaseUnavailable } from '../common/database-errors';
import { PgNotifier } from '../database/pg-notifier';
import { Metrics } from '../observability/metrics';
import { SecretCipher } from '../webhooks/secret-cipher';
import { INACTIVE_ENDPOINT_ERROR } from '../webhooks/webhook.repository';
import {
  AttemptOutcome,
  CLAIM_EARLY_MS,
  ClaimedDelivery,
  DeliveryRepository,
  EndpointLimits,
  HandOff,
  ScheduledRetry,
} from './delivery.repository';
import { decideAfterAttempt } from './retry-policy';
import { SendResult, WebhookSender } from './webhook-sender';

/** Channel on which a commit that created due work wakes every worker. */
export const DELIVERIES_CHANNEL = 'hookline_deliveries';

const CLAIM_BATCH = 500;
/**
 * While due work is waiting, a claim is worth its statement only when this share of the slots is
 * free: claiming each freed slot on its own ran one claim per completed attempt (bench/README.md).
 */
const REFILL_SHARE = 0.25;
const NEXT_DUE_CHECK_INTERVAL_MS = 1_000;
/** A publish waits at most this long for a claim round to end before it writes its deliveries due. */
const HAND_OFF_WAIT_MS = 50;
const MAX_CACHED_SECRETS = 10_000;
const FLUSH_BATCH = 500;
/**
 * Results wait this long to be written together (unless FLUSH_BATCH are waiting). It is off the
 * delivery's path (the request has left; a retry has its own timer), and each statement costs
 * both processes: at 500 events/s, 25 ms instead of 5 wrote results in 762 statements instead of
 * 2,874 over 22 s; in three pairs of runs Hookline's CPU changed by -9, -9 and +2 %, PostgreSQL's
 * by -9, -5 and -9 % (bench/README.md, ninth session).
 */
const FLUSH_DELAY_MS = 25;
const MAX_BACKOFF_MS = 5_000;
const FLUSH_RETRY_MS = 500;
/** While the database stays away, one warning in this many failures (the first few all show). */
const LOG_EVERY_NTH_FAILURE = 6;

/**
 * The delivery worker of one process. It claims due deliveries in batches, sends each one, and
 * writes attempts and decisions back in batches.
 *
 * - New work is picked up within milliseconds: publishes NOTIFY on commit.
 * - Retries fire on time: after every claim the worker sets a timer for the next due delivery,
 *   and a retry it schedules itself sets one directly; the one-second sweep is only a safety net.
 * - A slow or dead endpoint never delays the others: it gets at most ENDPOINT_CONCURRENCY slots of
 *   DISPATCH_CONCURRENCY, and the claim leaves its deliveries alone while they are all taken.
 * - Each claim is leased for one attempt's time limit plus LEASE_MARGIN_MS; a crashed worker's
 *   claims come back when the lease ends.
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Dispatcher.name);
  private readonly leaseMs: number;
  private readonly refillMin: number;
  /** Free slots of a full endpoint that are worth a claim (see REFILL_SHARE). */
  private readonly endpointRefill: number;
  private readonly inFlightByEndpoint = new Map<string, number>();
  private readonly inFlight = new Map<string, ClaimedDelivery>();
  private readonly secrets = new Map<string, { sealed: string; secret: string }>();
  private readonly sends = new Set<Promise<void>>();
  private outcomes: AttemptOutcome[] = [];
  private running = false;
  private claiming = false;
  /** The claim round under way, if any (shutdown waits for it: it may still start sends). */
  private claimRound?: Promise<void>;
  /** The publish under way that writes deliveries leased to this worker, if any (offerSlots). */
  private handOff?: { done: Promise<void>; finish: () => void };
  /** Set once shutdown has written or given back everything: late outcomes are dropped. */
  private stopped = false;
  private claimRequested = false;
  private workWaiting = false;
  /** Due times of the retries this worker scheduled, one FIFO per delay (each is in time order). */
  private readonly localRetries = new Map<number, number[]>();
  private dueTimer?: NodeJS.Timeout;
  private dueAt = Number.POSITIVE_INFINITY;
  private flushTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private backoffMs = 0;
  private nextDueCheckedAt = 0;
  /** No claim before this time (backing off after a failed claim). */
  private claimRetryAt = 0;
  private claimFailures = 0;
  private flushFailures = 0;
  private readonly leaseToken = randomUUID();

  constructor(
    private readonly config: AppConfig,
    private readonly deliveries: DeliveryRepository,
    private readonly sender: WebhookSender,
    private readonly cipher: SecretCipher,
    private readonly notifier: PgNotifier,
    private readonly metrics: Metrics,
  ) {
    this.leaseMs = config.deliveryTimeoutMs + config.leaseMarginMs;
    this.refillMin = Math.max(1, Math.floor(Math.min(config.dispatchConcurrency, CLAIM_BATCH) * REFILL_SHARE));
    this.endpointRefill = Math.max(1, Math.floor(config.endpointConcurrency * REFILL_SHARE));
  }

  onApplicationBootstrap(): void {
    if (!this.config.runsWorker) return;
    this.running = true;
    // A publish of this process names this worker when all it left due waits for endpoints whose
    // slots here are all taken: one of those slots coming free wakes it (start()), not the publish.
    this.notifier.listen(DELIVERIES_CHANNEL, (payload) => {
      if (payload !== this.leaseToken) this.wake();
    });
    this.notifier.onReconnect(() => this.wake());
    this.wake();
  }

  /** Stop claiming, let in-flight attempts finish (or give their claims back), write everything. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.dueTimer);
    const deadline = Date.now() + this.config.shutdownTimeoutMs;
    // A claim round or hand-off under way still starts what it got; those sends are drained like the others.
    await this.claimRound;
    await this.handOff?.done;
    const drained = Promise.all([...this.sends]);
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), Math.max(0, deadline - Date.now())).unref()),
    ]);
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushFailures = 0;
    await this.flush();
    this.stopped = true;
    if (timedOut && this.inFlight.size > 0) {
      const ids = [...this.inFlight.keys()];
      this.logger.warn(`shutdown: giving back ${ids.length} unfinished claims`);
      await this.deliveries.releaseLeases(ids, this.leaseToken).catch((error: unknown) => {
        this.logger.warn(`could not give claims back (they return when their lease ends): ${String(error)}`);
      });
    }
  }

  /** Asks for a claim round as soon as possible (coalesced; after a failed claim, once the backoff ends). */
  wake(): void {
    if (!this.running) return;
    if (Date.now() < this.claimRetryAt) {
      // The one-second poll and notifications would otherwise defeat the backoff.
      this.setDueTimer(this.claimRetryAt);
      return;
    }
    if (this.claiming || this.handOff) {
      this.claimRequested = true;
      return;
    }
    this.claiming = true;
    this.claimRound = this.claimRounds().finally(() => {
      this.claiming = false;
      this.claimRound = undefined;
    });
  }

  /**
   * Slots for the deliveries of a publish of this process: it writes them leased to this worker,
   * which sends them at once, with no claim and no wake-up in between (EventRepository.publishMany).
   * Offered only while the worker is caught up (no claim under way or asked for, nothing known to be
   * waiting), so that new events never overtake due work such as retries; one hand-off at a time,
   * and claims wait for it, so that every slot is counted once. Each offer must be answered by
   * takeHandOff, also when the publish failed.
   */
  offerSlots(): HandOff | undefined {
    if (!this.running || this.claiming || this.handOff || this.claimRequested || this.workWaiting) return undefined;
    if (Date.now() < this.claimRetryAt || this.flushFailures > 0) return undefined;
    const room = this.config.dispatchConcurrency - this.inFlight.size;
    if (room <= 0) return undefined;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.handOff = { done, finish };
    return { ...this.endpointLimits(), limit: Math.min(room, CLAIM_BATCH), leaseMs: this.leaseMs, leaseToken: this.leaseToken };
  }

  /**
   * {@link offerSlots}, once the claim round under way (if any) has ended, waiting at most
   * {@link HAND_OFF_WAIT_MS}. Refused during every claim, publishes wrote their deliveries due, whose
   * NOTIFY started the next claim, which refused the next publishes: at 500 events/s the worker kept
   * claiming what its own process had just published (bench/README.md).
   */
  async offerSlotsAfterClaim(): Promise<HandOff | undefined> {
    const round = this.claimRound;
    if (round && this.running) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([round, new Promise<void>((resolve) => (timer = setTimeout(resolve, HAND_OFF_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return this.offerSlots();
  }

  /** Sends the deliveries a publish leased to this worker (none when it failed) and ends the hand-off. */
  takeHandOff(deliveries: ClaimedDelivery[]): void {
    const handOff = this.handOff;
    this.handOff = undefined;
    // Shutdown waits for a hand-off under way before it drains the sends, these included.
    for (const delivery of deliveries) this.start(delivery);
    handOff?.finish();
    if (this.claimRequested) this.wake();
  }

  /** The safety net's entry (DispatchSweeper): lost notifications, expired leases. */
  get isRunning(): boolean {
    return this.running;
  }

  private async claimRounds(): Promise<void> {
    try {
      // After an outage, write the results kept in memory before claiming more: a lease that ran
      // out meanwhile would otherwise be claimed and its delivery sent again.
      if (this.flushFailures > 0) await this.flush();
      do {
        const room = this.config.dispatchConcurrency - this.inFlight.size;
        // More is due (the last claim was full) but few slots are free: wait until more are.
        if (room <= 0 || (this.claimRequested && room < this.refillMin)) {
          this.workWaiting = true;
          break;
        }
        const limit = Math.min(room, CLAIM_BATCH);
        this.claimRequested = false;
        const claimed = await this.deliveries.claimDue(limit, this.leaseMs, this.leaseToken, this.endpointLimits());
        for (const delivery of claimed) this.start(delivery);
        // More are due than this claim took: claim again (as soon as enough slots are free). When
        // the per-endpoint slots cut the claim down, a freed slot of that endpoint wakes us.
        if ((claimed[0]?.lockedCount ?? 0) >= limit) this.claimRequested = true;
      } while (this.claimRequested && this.running);
      if (this.claimFailures > 0) this.logger.log(`claiming again after ${this.claimFailures} failed claims`);
      this.backoffMs = 0;
      this.claimFailures = 0;
      this.claimRetryAt = 0;
      // Not awaited: on a table with many dead index entries it took 40 ms and more under load,
      // and claims (and publishes waiting to hand off) would wait for it.
      this.scheduleNextDue();
    } catch (error) {
      this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 100), MAX_BACKOFF_MS);
      this.claimFailures++;
      this.claimRetryAt = Date.now() + this.backoffMs;
      if (shouldLog(this.claimFailures)) {
        const reason = isDatabaseUnavailable(error) ? `database unavailable: ${errorMessage(error)}` : String(error);
        this.logger.warn(`claim failed ${this.claimFailures} time(s) in a row (${reason}); retrying in ${this.backoffMs} ms`);
      }
      this.setDueTimer(this.claimRetryAt);
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

  /**
   * Looks up the next due delivery, at most once a second. The retries this worker schedules set
   * its timer directly (record()), so the lookup only finds work that other processes left due
   * (their retries, leases of dead workers): asking after every claim was one statement per
   * published event at 500 events/s.
   */
  private scheduleNextDue(): void {
    const now = Date.now();
    if (now - this.nextDueCheckedAt < NEXT_DUE_CHECK_INTERVAL_MS) return;
    this.nextDueCheckedAt = now;
    this.deliveries.nextDueAt().then(
      (next) => {
        if (next) this.setDueTimer(next.getTime());
      },
      // The one-second sweep still comes; the next claim round asks again.
      (error: unknown) => this.logger.debug(`could not look up the next due delivery: ${errorMessage(error)}`),
    );
  }

  /** Keeps one timer, for the earliest moment known to have work. */
  private setDueTimer(at: number): void {
    if (!this.running || at >= this.dueAt) return;
    clearTimeout(this.dueTimer);
    this.dueAt = at;
    // A couple of milliseconds late rather than early: early finds nothing due yet.
    this.dueTimer = setTimeout(
      () => {
        this.dueAt = Number.POSITIVE_INFINITY;
        this.armForNextLocalRetry();
        this.wake();
      },
      Math.max(0, at - Date.now() + 2),
    );
  }

  /** Remembers a retry this worker scheduled, so that its timer fires for it on time. */
  private scheduleLocalRetry(at: number, delayMs: number): void {
    let queue = this.localRetries.get(delayMs);
    if (!queue) this.localRetries.set(delayMs, (queue = []));
    // Kept in order: armForNextLocalRetry takes them from the front.
    let index = queue.length;
    while (index > 0 && queue[index - 1] > at) index--;
    queue.splice(index, 0, at);
    this.setDueTimer(at);
  }

  /**
   * The timer set when a retry was decided assumed it would be written at once. When the write's
   * now() came later (it waited for a connection or a CPU), the retry is due later too, possibly
   * past the claim's {@link CLAIM_EARLY_MS}: that claim would miss it and leave it to the one-second
   * sweep (a 1→2 gap of 1,724 ms in a full benchmark run). Such retries get a timer of their own.
   */
  private catchUpWithRetries(batch: AttemptOutcome[], scheduled: ScheduledRetry[]): void {
    if (scheduled.length === 0) return;
    const planned = new Map(batch.map((outcome) => [outcome.deliveryId, outcome]));
    for (const { deliveryId, dueAt } of scheduled) {
      const outcome = planned.get(deliveryId);
      if (outcome && dueAt > outcome.decidedAt + outcome.retryDelayMs + CLAIM_EARLY_MS / 2) {
        this.scheduleLocalRetry(dueAt, outcome.retryDelayMs);
      }
    }
  }

  /**
   * Drops the retries that the claim about to run takes (those due within CLAIM_EARLY_MS) and sets
   * the timer for the earliest one left. Retries decided together (an endpoint's attempts timing
   * out at once) come due a few milliseconds apart: a timer for each was a claim for each, 38 claims
   * a second in the benchmark's isolation scenario.
   */
  private armForNextLocalRetry(): void {
    const now = Date.now() + CLAIM_EARLY_MS;
    let earliest = Number.POSITIVE_INFINITY;
    for (const [delay, queue] of this.localRetries) {
      let due = 0;
      while (due < queue.length && queue[due] <= now) due++;
      if (due > 0) queue.splice(0, due);
      if (queue.length === 0) this.localRetries.delete(delay);
      else if (queue[0] < earliest) earliest = queue[0];
    }
    if (earliest !== Number.POSITIVE_INFINITY) this.setDueTimer(earliest);
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
        // A full endpoint's slots are claimed again once a share of them is free, not one by one:
        // a dead endpoint's attempts time out a few at a time, and a claim for each freed slot was
        // 32 claims a second in the benchmark's isolation scenario.
        const freedEndpoint = left === this.config.endpointConcurrency - this.endpointRefill;
        if (freedEndpoint || (this.workWaiting && this.config.dispatchConcurrency - this.inFlight.size >= this.refillMin)) {
          this.workWaiting = false;
          this.wake();
        }
      });
    this.sends.add(send);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    if (!delivery.webhookActive) {
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
      secret: this.secretOf(delivery),
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

  private secretOf(delivery: ClaimedDelivery): string {
    const cached = this.secrets.get(delivery.webhookId);
    if (cached && cached.sealed === delivery.secretSealed) return cached.secret;
    const secret = this.cipher.decrypt(delivery.secretSealed, delivery.webhookId);
    // Bounded like the API-key cache: deleted endpoints' secrets do not stay in memory for good.
    if (this.secrets.size >= MAX_CACHED_SECRETS) this.secrets.clear();
    this.secrets.set(delivery.webhookId, { sealed: delivery.secretSealed, secret });
    return secret;
  }

  private record(outcome: AttemptOutcome): void {
    // After shutdown its claim was given back (or will come back when the lease ends).
    if (this.stopped) return;
    this.outcomes.push(outcome);
    if (outcome.status === 'pending') this.scheduleLocalRetry(outcome.decidedAt + outcome.retryDelayMs, outcome.retryDelayMs);
    // While writes fail, the retry timer (with its backoff) writes them, not every new outcome.
    if (this.flushFailures > 0) return;
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
    let batch = this.outcomes;
    if (batch.length === 0) return;
    this.outcomes = [];
    this.flushing = this.deliveries
      .recordOutcomes(batch)
      .then((scheduled) => {
        this.catchUpWithRetries(batch, scheduled);
        if (this.flushFailures > 0) this.logger.log(`recorded ${batch.length} outcomes kept through ${this.flushFailures} failed writes`);
        this.flushFailures = 0;
        if (this.outcomes.length > 0) this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
      })
      .catch(async (error: unknown) => {
        // A batch PostgreSQL refuses for its content (not for being away) would be refused again
        // forever: write its outcomes one by one, keep what the database was away for, and drop
        // (with an error log) what it refuses; those deliveries come back when their lease ends.
        if (!isDatabaseUnavailable(error) && batch.length > 1) {
          const kept: AttemptOutcome[] = [];
          for (const outcome of batch) {
            await this.deliveries.recordOutcomes([outcome]).catch((single: unknown) => {
              if (isDatabaseUnavailable(single)) kept.push(outcome);
              else this.logger.error(`dropping the outcome of delivery ${outcome.deliveryId}: ${errorMessage(single)}`);
            });
          }
          if (kept.length === 0) return;
          batch = kept;
        }
        this.outcomes = batch.concat(this.outcomes);
        this.flushFailures++;
        const delay = Math.min(FLUSH_RETRY_MS * 2 ** (this.flushFailures - 1), MAX_BACKOFF_MS);
        if (shouldLog(this.flushFailures)) {
          this.logger.warn(
            `could not record ${this.outcomes.length} outcomes, ${this.flushFailures} time(s) in a row (${errorMessage(error)}); retrying in ${delay} ms`,
          );
        }
        // Once shutdown began, its own final flush is the last try (no timer left behind).
        if (this.running) this.flushTimer ??= setTimeout(() => void this.flush(), delay);
      })
      .finally(() => (this.flushing = undefined));
    await this.flushing;
  }
}

function shouldLog(failures: number): boolean {
  return failures <= LOG_EVERY_NTH_FAILURE || failures % LOG_EVERY_NTH_FAILURE === 0;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
