import { Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/database-errors';
import { errorMessage, shouldLog } from '../../common/failure-log';
import type { AttemptOutcome, RecordedOutcomes } from '../store/delivery.repository';

/** Outcomes wait at most this long to be written together (unless FLUSH_BATCH are waiting). */
export const FLUSH_DELAY_MS = 25;
export const FLUSH_BATCH = 500;
export const FLUSH_RETRY_MS = 500;
export const MAX_FLUSH_BACKOFF_MS = 5_000;

export interface OutcomeWriter {
  /** Writes the attempt rows and decisions; answers the retries as the database scheduled them, and the endpoints to disable. */
  recordOutcomes(outcomes: AttemptOutcome[]): Promise<RecordedOutcomes>;
}

/**
 * Writes the results of attempts (the attempt row and the decision on the delivery) in batches.
 * Writing is off the delivery's path: the request has gone and a retry has its own timer, so a
 * few milliseconds of waiting buy one statement for many outcomes. While the database is away
 * the outcomes stay in memory and are written, in order, once it is back.
 */
export class OutcomeRecorder {
  private readonly logger = new Logger('Dispatcher');
  private outcomes: AttemptOutcome[] = [];
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private failures = 0;
  /** After shutdown's last flush, late outcomes are dropped: their claims were given back. */
  private stopped = false;
  private retrying = true;

  constructor(
    private readonly writer: OutcomeWriter,
    /** Called with each written batch and what the database answered for it. */
    private readonly onWritten: (batch: AttemptOutcome[], recorded: RecordedOutcomes) => void,
  ) {}

  /** True while the last write failed: claiming waits, so no lease runs out unrecorded. */
  get failing(): boolean {
    return this.failures > 0;
  }

  record(outcome: AttemptOutcome): void {
    if (this.stopped) return;
    this.outcomes.push(outcome);
    // While writes fail, the retry timer (with its backoff) writes them, not every new outcome.
    if (this.failures > 0) return;
    if (this.outcomes.length >= FLUSH_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes buffered outcomes; on a database error keeps them and tries again with backoff. */
  async flush(): Promise<void> {
    if (this.flushing) {
      await this.flushing;
      if (this.outcomes.length === 0) return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.outcomes;
    if (batch.length === 0) return;
    this.outcomes = [];
    this.flushing = this.write(batch).finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  /** Shutdown began: a failed write is no longer retried on a timer; close() makes the last try. */
  stopRetrying(): void {
    this.retrying = false;
  }

  /** Shutdown: one last try to write everything (no timer left behind), then drop what comes late. */
  async close(): Promise<void> {
    this.retrying = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.failures = 0;
    await this.flush();
    this.stopped = true;
  }

  private async write(batch: AttemptOutcome[]): Promise<void> {
    try {
      const recorded = await this.writer.recordOutcomes(batch);
      this.onWritten(batch, recorded);
      if (this.failures > 0) this.logger.log(`recorded ${batch.length} outcomes kept through ${this.failures} failed writes`);
      this.failures = 0;
      if (this.outcomes.length > 0) this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
    } catch (error) {
      // A batch PostgreSQL refuses for its content (not for being away) would be refused again
      // forever: write its outcomes one by one, keep what the database was away for, and drop
      // (with an error log) what it refuses; those deliveries come back when their lease ends.
      let kept = batch;
      if (!isDatabaseUnavailable(error) && batch.length > 1) {
        kept = [];
        for (const outcome of batch) {
          await this.writer.recordOutcomes([outcome]).catch((single: unknown) => {
            if (isDatabaseUnavailable(single)) kept.push(outcome);
            else this.logger.error(`dropping the outcome of delivery ${outcome.deliveryId}: ${errorMessage(single)}`);
          });
        }
        if (kept.length === 0) return;
      }
      this.outcomes = kept.concat(this.outcomes);
      this.failures++;
      const delay = Math.min(FLUSH_RETRY_MS * 2 ** (this.failures - 1), MAX_FLUSH_BACKOFF_MS);
      if (shouldLog(this.failures)) {
        this.logger.warn(
          `could not record ${this.outcomes.length} outcomes, ${this.failures} time(s) in a row (${errorMessage(error)}); retrying in ${delay} ms`,
        );
      }
      if (this.retrying) this.timer ??= setTimeout(() => void this.flush(), delay);
    }
  }
}
