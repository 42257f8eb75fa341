import { Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { AppConfig } from '../../config/app-config';
import { SqlPool } from '../../database/sql-pool';
import { DatabaseEngine } from '../../database/database-engine';
import { Metrics } from '../../observability/metrics';
import { type MaintenanceReport, PartitionMaintenance } from './partition-maintenance';
import { partitionName } from './partition-plan';

/**
 * Runs {@link PartitionMaintenance} at start (so that this instance's clock has its partitions
 * before it publishes) and every hour on every instance; the advisory lock lets one run at a time.
 * Indexes are rebuilt by the hourly runs only: a rebuild reads a whole table, and the start waits
 * for its run.
 */
@Injectable()
export class RetentionScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(RetentionScheduler.name);
  private readonly maintenance: PartitionMaintenance;

  constructor(
    private readonly config: AppConfig,
    pool: SqlPool,
    private readonly metrics: Metrics,
    @Optional() engine: DatabaseEngine = DatabaseEngine.plain,
  ) {
    this.maintenance = new PartitionMaintenance(pool, !engine.citus);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.run(Date.now(), { compact: false });
  }

  @Cron(CronExpression.EVERY_HOUR)
  async hourly(): Promise<void> {
    await this.run();
  }

  /** One maintenance run now; never throws (the next run tries again). */
  async run(nowMs = Date.now(), { compact = true } = {}): Promise<MaintenanceReport | null> {
    try {
      const report = await this.maintenance.run(nowMs, this.config.retentionDays, { compact });
      for (const dropped of report.dropped) {
        this.metrics.retentionPartitionsDropped.inc({ table: dropped.table });
        this.metrics.retentionRowsRemoved.inc({ table: dropped.table }, dropped.rows);
        this.logger.log(`retention dropped ${partitionName(dropped.table, dropped.day)} (${dropped.rows} rows)`);
      }
      for (const index of report.compacted) {
        this.logger.log(`rebuilt ${index.name}, ${index.reason}: ${mb(index.bytesBefore)} → ${mb(index.bytesAfter)}`);
      }
      for (const day of report.keptPending) {
        this.logger.log(`retention kept ${partitionName('delivery_log', day)}: a delivery of that day is still queued`);
      }
      return report;
    } catch (error) {
      this.logger.warn(`partition maintenance failed: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
