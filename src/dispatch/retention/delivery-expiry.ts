import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { formatDuration } from '../../config/retry-schedule';
import { SqlPool } from '../../database/sql-pool';
import { Metrics } from '../../observability/metrics';
import { errorMessage } from '../../common/failure-log';
import { poolSql } from '../../database/sql';
import { EXPIRE_DELIVERIES, EXPIRE_DELIVERIES_ON_CLUSTER } from '../store/delivery-expiry.sql';
import { DatabaseEngine } from '../../database/database-engine';

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
    @Optional() private readonly engine: DatabaseEngine = DatabaseEngine.plain,
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
        const [{ ended }] = await poolSql(this.pool).rows<{ ended: number }>(
          this.engine.citus ? EXPIRE_DELIVERIES_ON_CLUSTER : EXPIRE_DELIVERIES,
          [this.config.maxDeliveryAgeMs, batch, error],
        );
        total += ended;
        if (ended < batch) break;
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
