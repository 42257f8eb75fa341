import type { AttemptOutcome, ScheduledRetry } from '../store/delivery.repository';
import { CLAIM_EARLY_MS } from '../store/delivery.repository';

/** The queue of deferred due times among the per-delay queues of retries (no retry has this delay). */
const DEFERRED_QUEUE = -1;

/** How often, at most, the database is asked when the next delivery is due. */
export const NEXT_DUE_CHECK_INTERVAL_MS = 1_000;

/**
 * When this worker should claim next. It keeps one timer, for the earliest moment known to have
 * work: the retries this worker decided itself (set the moment they are decided, so they go out
 * on time), work other processes left due (looked up at most once a second), and the end of a
 * claim backoff. When the timer fires it calls `onDue`, which starts a claim round.
 */
export class RetryTimer {
  private timer?: NodeJS.Timeout;
  private dueAt = Number.POSITIVE_INFINITY;
  /** Due times of the retries this worker scheduled, one FIFO per delay (each is in time order). */
  private readonly localRetries = new Map<number, number[]>();
  private nextDueCheckedAt = 0;
  private running = false;

  constructor(
    private readonly onDue: () => void,
    private readonly lookUpNextDue: () => Promise<Date | null>,
    private readonly onLookUpFailed: (error: unknown) => void,
  ) {}

  /** Keeps one timer, for the earliest moment known to have work. */
  wakeAt(at: number): void {
    if (!this.running || at >= this.dueAt) return;
    clearTimeout(this.timer);
    this.dueAt = at;
    // A couple of milliseconds late rather than early: early finds nothing due yet.
    this.timer = setTimeout(
      () => {
        this.dueAt = Number.POSITIVE_INFINITY;
        this.armForNextLocalRetry();
        this.onDue();
      },
      Math.max(0, at - Date.now() + 2),
    );
  }

  /** Remembers a retry this worker scheduled, so that the timer fires for it on time. */
  scheduleLocalRetry(at: number, delayMs: number): void {
    let queue = this.localRetries.get(delayMs);
    if (!queue) this.localRetries.set(delayMs, (queue = []));
    // Kept in order: armForNextLocalRetry takes them from the front.
    let index = queue.length;
    while (index > 0 && queue[index - 1] > at) index--;
    queue.splice(index, 0, at);
    this.wakeAt(at);
  }

  /** Remembers when deliveries put off by a rate limit come due, so that the timer fires then. */
  scheduleDeferred(at: number): void {
    this.scheduleLocalRetry(at, DEFERRED_QUEUE);
  }

  /**
   * A retry's timer assumed it would be written at once. When the write's now() came later (it
   * waited for a connection or a CPU), the retry is due later too, possibly past the claim's
   * CLAIM_EARLY_MS, so that claim would miss it: such retries get a timer of their own.
   */
  catchUp(batch: readonly AttemptOutcome[], scheduled: readonly ScheduledRetry[]): void {
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
   * Asks the database when the next delivery is due, at most once a second. This worker's own
   * retries set the timer directly, so this only finds work other processes left due (their
   * retries; the leases of dead workers are the sweep's); asking after every claim cost a
   * statement per event.
   */
  checkNextDue(): void {
    const now = Date.now();
    if (now - this.nextDueCheckedAt < NEXT_DUE_CHECK_INTERVAL_MS) return;
    this.nextDueCheckedAt = now;
    this.lookUpNextDue().then((next) => {
      if (next) this.wakeAt(next.getTime());
    }, this.onLookUpFailed);
  }

  start(): void {
    this.running = true;
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
  }

  /**
   * Drops the retries that the claim about to run takes (those due within CLAIM_EARLY_MS) and sets
   * the timer for the earliest one left. Retries decided together (an endpoint's attempts timing
   * out at once) come due milliseconds apart: one timer for all of them is one claim, not many.
   */
  private armForNextLocalRetry(): void {
    const horizon = Date.now() + CLAIM_EARLY_MS;
    let earliest = Number.POSITIVE_INFINITY;
    for (const [delay, queue] of this.localRetries) {
      let due = 0;
      while (due < queue.length && queue[due] <= horizon) due++;
      if (due > 0) queue.splice(0, due);
      if (queue.length === 0) this.localRetries.delete(delay);
      else if (queue[0] < earliest) earliest = queue[0];
    }
    if (earliest !== Number.POSITIVE_INFINITY) this.wakeAt(earliest);
  }
}
