import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { formatDuration } from '../../config/retry-schedule';
import { SqlPool } from '../../database/sql-pool';
import { Metrics } from '../../observability/metrics';
import { errorMessage } from '../../common/failure-log';
import { sqlIdFloor } from '../store/sql-id-floor';

/** Deliveries ended by one statement; a larger backlog takes several, each short. */
export const EXPIRY_BATCH = 5_000;

/** The `lastError` of a delivery that expired. */
export function expiredDeliveryError(maxAgeMs: number): string {
  return `expired: still pending ${formatDuration(maxAgeMs)} after its event (MAX_DELIVERY_AGE); retry it to send it again`;
}

/**
 * How often the expiry runs: a sixth of MAX_DELIVERY_AGE, from one second to thirty, so that a
 * delivery ends within a minute of its age (and a short age used in tests is seen soon).
 */
export function expiryIntervalMs(maxAgeMs: number): number {
  return Math.min(30_000, Math.max(1_000, Math.floor(maxAgeMs / 6)));
}

/**
 * The pending deliveries older than `$1` ms, at most `$2`, ended `failed` with `$3` as their last
 * error. Old means on the database's clock: the event's time (the id, which also lets PostgreSQL
 * skip every day partition younger than the age) and the delivery's own `created_at` (a replay
 * creates it later) and `restarted_at` (a person's retry) all that far back. Waiting ones are
 * included whatever holds them: a retry not yet due, an ordered delivery held behind an earlier
 * one (`next_attempt_at` NULL), one a rate limit put off. One in flight is left to finish its
 * attempt (its lease still runs); one whose worker died (the lease ran out) is not. SKIP LOCKED,
 * so a claim and another process's expiry are never waited for.
 */
const EXPIRE = `
  WITH expired AS (
    SELECT id, store_id FROM deliveries
    WHERE status = 'pending'
      AND id < ${sqlIdFloor('del', 'now() - make_interval(secs => $1::double precision / 1000)')}
      AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
      AND (restarted_at IS NULL OR restarted_at <= now() - make_interval(secs => $1::double precision / 1000))
      AND (lease_token IS NULL OR next_attempt_at <= now())
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  )
  UPDATE deliveries d
  SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, last_error = $3, updated_at = now()
  FROM expired x
  WHERE d.id = x.id AND d.store_id = x.store_id`;

/**
 * Ends every delivery still pending MAX_DELIVERY_AGE after its event (docs/reliability.md), so
 * that no backlog, ordered or rate-limited ones included, keeps a day of the log past retention
 * for longer than that. A statement of its own, apart from the claim, on every instance.
 */
@Injectable()
export class DeliveryExpiry implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryExpiry.name);
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly config: AppConfig,
    private readonly pool: SqlPool,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.run(), expiryIntervalMs(this.config.maxDeliveryAgeMs));
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One pass now: answers how many deliveries it ended; never throws (the next pass tries again). */
  async run(batch = EXPIRY_BATCH): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    let total = 0;
    try {
      const error = expiredDeliveryError(this.config.maxDeliveryAgeMs);
      for (;;) {
        const result = await this.pool.query(EXPIRE, [this.config.maxDeliveryAgeMs, batch, error]);
        total += result.rowCount ?? 0;
        if ((result.rowCount ?? 0) < batch) break;
      }
    } catch (error) {
      this.logger.warn(`could not expire old deliveries: ${errorMessage(error)}`);
    } finally {
      this.running = false;
    }
    if (total > 0) {
      this.metrics.deliveriesExpired.inc(total);
      this.logger.log(`${total} deliveries still pending ${formatDuration(this.config.maxDeliveryAgeMs)} after their event ended failed`);
    }
    return total;
  }
}
