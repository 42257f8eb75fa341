import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { idFloor } from '../../common/ids';
import { AppConfig } from '../../config/app-config';
import { typeormSql, type Sql } from '../../database/sql';
import { DELIVERIES_CHANNEL } from './deliveries-channel';
import type { DeliveryStatus } from './delivery.entity';
import type { AttemptRow } from './delivery.repository';
import { boundBatch, type ReplayBatch } from './replay-batch';
import {
  ATTEMPTS_OF_DELIVERY,
  DELIVERY_STATE,
  ENDPOINT_DELIVERIES_PAGE,
  EVENT_DELIVERIES,
  FAILED_CANDIDATES,
  FIND_DELIVERY,
  REPLAY,
  REPLAY_CANDIDATES,
  REPLAY_STATEMENT_TIMEOUT,
  RESTART_DELIVERY,
  RESTART_FAILED,
  TRY_REPLAY_LOCK,
} from './delivery-log.sql';

export interface DeliveryRow {
  id: string;
  storeId: string;
  eventId: string;
  webhookId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  leased: boolean;
  lastStatusCode: number | null;
  lastError: string | null;
  /** How long the last attempt took; null before the first. */
  lastDurationMs: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What a replay or retry-failed request queued, and the `since` that continues its window when it stopped at its cap. */
export interface QueuedBatch {
  queued: number;
  next: Date | null;
}

export interface DeliveryFilter {
  limit: number;
  beforeId?: string;
  status?: DeliveryStatus;
  eventType?: string;
}

/** The first key of the advisory lock a replay or retry-failed holds on its endpoint (the second is the endpoint's). */
const REPLAY_LOCK = 0x48_4c_52_50; // 'HLRP'

/**
 * The delivery log as the API reads it, and the manual retries that start a new cycle. The
 * worker's hot statements (claims, results) are DeliveryRepository's; the statements themselves
 * are in `delivery-log.sql.ts`.
 *
 * A delivery older than retention is never made pending again (it reads as unknown to a retry):
 * retention drops a day once no delivery of it is pending, and nothing may make one pending after
 * that check (docs/reliability.md).
 */
@Injectable()
export class DeliveryLog {
  private readonly sql: Sql;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {
    this.sql = typeormSql(dataSource);
  }

  async findInStore(storeId: string, id: string): Promise<(DeliveryRow & { body: string }) | null> {
    const rows = await this.sql.rows<DeliveryRow & { body: string }>(FIND_DELIVERY, [id, storeId]);
    return rows[0] ?? null;
  }

  /** Just what a retry decides on (no envelope body). */
  async stateInStore(storeId: string, id: string): Promise<{ status: DeliveryStatus; webhookId: string; attemptCount: number } | null> {
    const rows = await this.sql.rows<{ status: DeliveryStatus; webhookId: string; attemptCount: number }>(DELIVERY_STATE, [
      id,
      storeId,
      this.config.retentionDays,
    ]);
    return rows[0] ?? null;
  }

  attemptsOf(deliveryId: string): Promise<AttemptRow[]> {
    return this.sql.rows<AttemptRow>(ATTEMPTS_OF_DELIVERY, [deliveryId]);
  }

  /** Newest first, `limit + 1` rows. */
  pageForWebhook(storeId: string, webhookId: string, filter: DeliveryFilter): Promise<DeliveryRow[]> {
    return this.sql.rows<DeliveryRow>(ENDPOINT_DELIVERIES_PAGE, [
      storeId,
      webhookId,
      filter.limit + 1,
      filter.beforeId ?? null,
      filter.status ?? null,
      filter.eventType ?? null,
    ]);
  }

  /** An event's deliveries carry its time in their ids: the range reads only its day's partition. */
  listForEvent(storeId: string, eventId: string): Promise<DeliveryRow[]> {
    const time = eventId.slice(eventId.indexOf('_') + 1, eventId.indexOf('_') + 11);
    return this.sql.rows<DeliveryRow>(EVENT_DELIVERIES, [storeId, eventId, `del_${time}`, `del_${time}~`]);
  }

  /**
   * Starts a new cycle for a finished delivery; null when it is pending (or unknown), or has had
   * its MAX_ATTEMPTS_PER_DELIVERY attempts.
   */
  async restart(storeId: string, id: string): Promise<DeliveryRow | null> {
    const rows = await this.sql.rows<DeliveryRow>(RESTART_DELIVERY, [
      id,
      storeId,
      this.config.retentionDays,
      this.config.maxAttemptsPerDelivery,
    ]);
    return rows[0] ?? null;
  }

  /**
   * Starts a new cycle for the endpoint's failed deliveries of events published at or after
   * `since` (all when not given), in event order, at most MAX_REPLAY_DELIVERIES of them (see
   * {@link boundBatch} for `next`). One that has had its MAX_ATTEMPTS_PER_DELIVERY attempts stays
   * failed. Null while another replay or retry-failed of the endpoint runs.
   */
  restartFailed(storeId: string, webhookId: string, since?: Date): Promise<QueuedBatch | null> {
    return this.exclusively(webhookId, async (sql) => {
      const candidates = await sql.rows<{ id: string }>(FAILED_CANDIDATES, [
        storeId,
        webhookId,
        idFloor('del', since?.getTime() ?? 0),
        this.config.maxReplayDeliveries + 1,
        this.config.retentionDays,
        this.config.maxAttemptsPerDelivery,
      ]);
      const batch = boundBatch(
        candidates.map((row) => row.id),
        this.config.maxReplayDeliveries,
      );
      if (batch.ids.length === 0) return { queued: 0, next: batch.next };
      const restarted = await sql.rows(RESTART_FAILED, [batch.ids, storeId, batch.ids[0], batch.ids.at(-1)]);
      return { queued: restarted.length, next: batch.next };
    });
  }

  /**
   * Queues what the endpoint missed in `window` (see {@link REPLAY}), at most
   * MAX_REPLAY_DELIVERIES deliveries (see {@link boundBatch} for `next`). Null while another
   * replay or retry-failed of the endpoint runs.
   */
  replay(storeId: string, webhookId: string, window: { from: Date; until: Date }): Promise<QueuedBatch | null> {
    return this.exclusively(webhookId, async (sql) => {
      const candidates = await sql.rows<{ id: string }>(REPLAY_CANDIDATES, [
        storeId,
        webhookId,
        idFloor('evt', window.from.getTime()),
        idFloor('evt', window.until.getTime()),
        window.from.toISOString(),
        window.until.toISOString(),
        this.config.maxReplayDeliveries + 1,
        this.config.retentionDays,
      ]);
      const batch: ReplayBatch = boundBatch(
        candidates.map((row) => row.id),
        this.config.maxReplayDeliveries,
      );
      if (batch.ids.length === 0) return { queued: 0, next: batch.next };
      const rows = await sql.rows<{ queued: number }>(REPLAY, [
        storeId,
        webhookId,
        batch.ids,
        batch.ids[0],
        batch.ids.at(-1),
        DELIVERIES_CHANNEL,
      ]);
      return { queued: rows[0].queued, next: batch.next };
    });
  }

  /**
   * Runs `work` in a transaction that holds the endpoint's replay lock, each statement under
   * REPLAY_TIMEOUT_MS (a timeout cancels it all, queuing nothing). Null, at once, when another
   * request holds the lock: two replays of one endpoint never run together.
   */
  private exclusively<T>(webhookId: string, work: (sql: Sql) => Promise<T>): Promise<T | null> {
    return this.dataSource.transaction(async (manager) => {
      const sql = typeormSql(manager);
      await sql.rows(REPLAY_STATEMENT_TIMEOUT, [String(this.config.replayTimeoutMs)]);
      const [{ locked }] = await sql.rows<{ locked: boolean }>(TRY_REPLAY_LOCK, [REPLAY_LOCK, webhookId]);
      return locked ? work(sql) : null;
    });
  }
}
