import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { isDatabaseUnavailable } from '../../common/database-errors';
import { PgNotifier } from '../../database/pg-notifier';
import { Metrics } from '../../observability/metrics';
import { Tracing } from '../../observability/tracing';
import { SecretCipher } from '../../webhooks/secret-cipher';
import { WebhooksService } from '../../webhooks/webhooks.service';
import { AttemptRunner } from './attempt-runner';
import { ClaimPacing, PACING_WINDOW_MS, REFILL_SHARE } from './claim-pacing';
import { AttemptOutcome, ClaimedDelivery, DeliveryRepository, HandOff, STORE_TURNS } from '../store/delivery.repository';
import { describeAttempt } from './attempt-log';
import { EndpointHealth } from '../health/endpoint-health';
import { DELIVERIES_CHANNEL } from '../store/deliveries-channel';
import { errorMessage, shouldLog } from '../../common/failure-log';
import { InFlight } from './in-flight';
import { OutcomeRecorder } from './outcome-recorder';
import { RetryTimer } from './retry-timer';
import { HeaderCache } from './header-cache';
import { SecretCache } from './secret-cache';
import { WebhookSender } from '../sending/webhook-sender';

const CLAIM_BATCH = 500;
/**
 * Free slots of a store held to its STORE_CONCURRENCY that are worth a claim (as ClaimPacing for
 * all slots): refilled as its attempts end, a quarter made many small claims of one store; at
 * half, fewer claims carry more.
 */
const STORE_REFILL_SHARE = 0.5;
/** The sender's time limit errors all read `timeout: …`. */
const TIMEOUT_ERROR = 'timeout:';
/** A publish waits at most this long for a claim round to end before it writes its deliveries due. */
const HAND_OFF_WAIT_MS = 50;
const MAX_BACKOFF_MS = 5_000;

/**
 * The delivery worker of one process. It claims due deliveries in batches and hands each to
 * AttemptRunner (sign, send, decide); OutcomeRecorder writes the results in batches, and
 * RetryTimer wakes it when the next retry or other due work comes.
 *
 * - New work is picked up within milliseconds: publishes NOTIFY on commit.
 * - Retries fire on time: a retry this worker schedules sets the timer directly, work left by
 *   other processes is looked up after claims; the one-second sweep is only a safety net.
 * - A slow or dead endpoint never delays the others: it gets at most ENDPOINT_CONCURRENCY slots of
 *   DISPATCH_CONCURRENCY, fewer after each timeout, and the claim leaves its deliveries alone
 *   while they are all taken.
 * - No store delays the others: each holds at most STORE_CONCURRENCY slots, and claims take the
 *   stores with due work in turn (DeliveryRepository.claimDue), not the oldest deliveries first.
 * - Each claim is leased for one attempt's time limit plus LEASE_MARGIN_MS; a crashed worker's
 *   claims come back when the lease ends.
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Dispatcher.name);
  private readonly leaseMs: number;
  /**
   * While due work is waiting, how many free slots are worth a claim: claiming each freed slot on
   * its own ran one claim per completed attempt.
   */
  private readonly pacing: ClaimPacing;
  /** Free slots of a store that are worth a claim (see STORE_REFILL_SHARE). */
  private readonly storeRefill: number;
  private readonly leaseToken = randomUUID();
  private readonly inFlight: InFlight;
  private readonly runner: AttemptRunner;
  private readonly recorder: OutcomeRecorder;
  private readonly timer: RetryTimer;
  private readonly health: EndpointHealth;
  private running = false;
  private claiming = false;
  /** The claim round under way, if any (shutdown waits for it: it may still start sends). */
  private claimRound?: Promise<void>;
  /** The publish under way that writes deliveries leased to this worker, if any (offerSlots). */
  private handOff?: { done: Promise<void>; finish: () => void };
  private claimRequested = false;
  private workWaiting = false;
  private backoffMs = 0;
  /** No claim before this time (backing off after a failed claim). */
  private claimRetryAt = 0;
  private claimFailures = 0;
  /** The store after which the next claim's turns start (see DeliveryRepository.claimDue). */
  private storeCursor = '';
  /** LOG_LEVEL=debug or trace: a line per attempt (read once; below it an attempt costs nothing more). */
  private readonly logsAttempts: boolean;

  constructor(
    private readonly config: AppConfig,
    private readonly deliveries: DeliveryRepository,
    sender: WebhookSender,
    cipher: SecretCipher,
    private readonly notifier: PgNotifier,
    metrics: Metrics,
    private readonly webhooks: WebhooksService,
    @Optional() tracing?: Tracing,
  ) {
    this.logsAttempts = config.logLevel === 'debug' || config.logLevel === 'trace';
    this.leaseMs = config.deliveryTimeoutMs + config.leaseMarginMs;
    this.pacing = new ClaimPacing(Math.min(config.dispatchConcurrency, CLAIM_BATCH));
    this.storeRefill = Math.max(1, Math.floor(config.storeConcurrency * STORE_REFILL_SHARE));
    this.inFlight = new InFlight(config.dispatchConcurrency, config.endpointConcurrency, config.storeConcurrency, {
      endpoint: REFILL_SHARE,
      store: STORE_REFILL_SHARE,
    });
    const headers = new HeaderCache((ids) => webhooks.headersToSend(ids));
    this.runner = new AttemptRunner(
      config,
      sender,
      new SecretCache(cipher),
      headers,
      metrics,
      this.leaseToken,
      (webhookId) => {
        this.webhooks
          .disableGone(webhookId)
          .catch((error: unknown) => this.logger.warn(`could not disable ${webhookId} after a 410: ${errorMessage(error)}`));
      },
      tracing?.enabled ? tracing : undefined,
    );
    this.timer = new RetryTimer(
      () => this.wake(),
      () => this.deliveries.nextDueAt(),
      // The one-second sweep still comes; the next claim round asks again.
      (error) => this.logger.debug(`could not look up the next due delivery: ${errorMessage(error)}`),
    );
    this.health = new EndpointHealth(config.endpointDisableAfterMs);
    const thresholds = {
      afterMs: config.endpointDisableAfterMs + this.health.stampIntervalMs,
      minFailures: config.endpointDisableMinFailures,
    };
    this.recorder = new OutcomeRecorder({ recordOutcomes: (batch) => deliveries.recordOutcomes(batch, thresholds) }, (batch, recorded) => {
      this.timer.catchUp(batch, recorded.scheduled);
      for (const webhookId of recorded.failing) this.disableFailing(webhookId);
    });
  }

  onApplicationBootstrap(): void {
    if (!this.config.runsWorker) return;
    this.running = true;
    this.timer.start();
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
    this.timer.stop();
    this.recorder.stopRetrying();
    const deadline = Date.now() + this.config.shutdownTimeoutMs;
    // A claim round or hand-off under way still starts what it got; those sends are drained like the others.
    await this.claimRound;
    await this.handOff?.done;
    const timedOut = await Promise.race([
      this.inFlight.drained().then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), Math.max(0, deadline - Date.now())).unref()),
    ]);
    await this.recorder.close();
    if (timedOut && this.inFlight.size > 0) {
      const ids = this.inFlight.ids();
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
      this.timer.wakeAt(this.claimRetryAt);
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
      // Sends that ended while this round was finishing asked for a claim it could no longer take.
      if (this.claimRequested && !this.workWaiting && this.inFlight.room >= this.pacing.refill) this.wake();
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
    if (Date.now() < this.claimRetryAt || this.recorder.failing) return undefined;
    const room = this.inFlight.room;
    if (room <= 0) return undefined;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.handOff = { done, finish };
    return { ...this.inFlight.limits(), limit: Math.min(room, CLAIM_BATCH), leaseMs: this.leaseMs, leaseToken: this.leaseToken };
  }

  /**
   * {@link offerSlots}, once the claim round under way (if any) has ended, waiting at most
   * {@link HAND_OFF_WAIT_MS}. Refused during every claim, publishes wrote their deliveries due, whose
   * NOTIFY started the next claim, which refused the next publishes: under steady load the worker
   * kept claiming what its own process had just published.
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
      if (this.recorder.failing) await this.recorder.flush();
      do {
        const room = this.inFlight.room;
        // More is due (the last claim was full) but few slots are free: wait until more are.
        if (room <= 0 || (this.claimRequested && room < this.pacing.refill)) {
          this.workWaiting = true;
          this.lookAgainIfBusy();
          break;
        }
        const limit = Math.min(room, CLAIM_BATCH);
        this.claimRequested = false;
        const claim = await this.deliveries.claimDue(limit, this.leaseMs, this.leaseToken, this.inFlight.limits(), {
          after: this.storeCursor,
          stores: Math.min(STORE_TURNS, limit),
        });
        if (claim.lastStore !== null) this.storeCursor = claim.lastStore;
        for (const delivery of claim.deliveries) this.start(delivery);
        // Put off by a rate limit: due again in a later second, which this worker claims on time.
        for (const at of claim.deferredDueAt) this.timer.scheduleDeferred(at);
        // More are due than this claim took: claim again (as soon as enough slots are free). A
        // store with few of its own slots free waits until a share of them is, which wakes us, as
        // does a share of a full endpoint's: claiming at once took a few deliveries a claim.
        if (claim.turnsCut || claim.crowdedStores.some((storeId) => this.inFlight.storeRoom(storeId) >= this.storeRefill)) {
          this.claimRequested = true;
        }
      } while (this.claimRequested && this.running);
      if (this.claimFailures > 0) this.logger.log(`claiming again after ${this.claimFailures} failed claims`);
      this.backoffMs = 0;
      this.claimFailures = 0;
      this.claimRetryAt = 0;
      // Not awaited: on a table with many dead index entries it can take tens of milliseconds,
      // and claims (and publishes waiting to hand off) would wait for it.
      this.timer.checkNextDue();
    } catch (error) {
      this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 100), MAX_BACKOFF_MS);
      this.claimFailures++;
      this.claimRetryAt = Date.now() + this.backoffMs;
      if (shouldLog(this.claimFailures)) {
        const reason = isDatabaseUnavailable(error) ? `database unavailable: ${errorMessage(error)}` : String(error);
        this.logger.warn(`claim failed ${this.claimFailures} time(s) in a row (${reason}); retrying in ${this.backoffMs} ms`);
      }
      this.timer.wakeAt(this.claimRetryAt);
    }
  }

  private start(delivery: ClaimedDelivery): void {
    const send = this.runner
      .run(delivery)
      .then((outcome) => {
        if (this.logsAttempts) this.logger.debug(describeAttempt(delivery, outcome));
        if (outcome.status === 'succeeded') {
          outcome.stampSuccess = this.health.shouldStamp(delivery.webhookId);
          this.inFlight.succeeded(delivery.webhookId);
        } else if (outcome.attempt) {
          this.health.failed(delivery.webhookId);
          // A timeout held its slot for the whole time limit: the endpoint gets fewer (InFlight).
          if (outcome.attempt.error?.startsWith(TIMEOUT_ERROR)) this.inFlight.timedOut(delivery.webhookId);
        }
        this.record(delivery, outcome);
      })
      .catch((error: unknown) => this.logger.error({ err: error }, `delivery ${delivery.id} failed unexpectedly`));
    this.inFlight.track(delivery, send, (freed) => {
      // A full endpoint's or store's slots are claimed again once a share of them is free, not one
      // by one: a dead endpoint's attempts time out a few at a time, and a claim per freed slot adds up.
      if (freed.endpoint || freed.store || (this.workWaiting && this.inFlight.room >= this.pacing.refill)) {
        this.workWaiting = false;
        this.wake();
      } else if (this.workWaiting) {
        this.lookAgainIfBusy();
      }
    });
  }

  /**
   * Waiting for the higher bar of a busy loop (ClaimPacing), the worker looks again a window later:
   * slots held by endpoints that never answer may keep the room below it until their time limit,
   * and nothing else would read the loop again once it quietens.
   */
  private lookAgainIfBusy(): void {
    if (this.inFlight.room > 0 && this.pacing.waitsLonger) this.timer.wakeAt(Date.now() + PACING_WINDOW_MS);
  }

  /** Several workers may see the same endpoint cross the thresholds: the disabling happens once (WebhooksService.disableFailing). */
  private disableFailing(webhookId: string): void {
    this.webhooks
      .disableFailing(webhookId)
      .then((disabled) => {
        if (disabled) this.logger.warn(`disabled endpoint ${webhookId}: no attempt succeeded for ENDPOINT_DISABLE_AFTER_MS`);
      })
      .catch((error: unknown) => this.logger.warn(`could not disable failing endpoint ${webhookId}: ${errorMessage(error)}`));
  }

  private record(delivery: ClaimedDelivery, outcome: AttemptOutcome): void {
    if (outcome.status === 'pending') this.timer.scheduleLocalRetry(outcome.decidedAt + outcome.retryDelayMs, outcome.retryDelayMs);
    this.recorder.record(outcome);
    // The end of an ordered delivery releases the next one of its endpoint when it is written:
    // written at once, not with the next batch, and claimed right after.
    if (delivery.ordered && outcome.status !== 'pending') void this.recorder.flush().then(() => this.wake());
  }
}
