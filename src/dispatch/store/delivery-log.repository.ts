import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { idFloor } from '../../common/ids';
import { AppConfig } from '../../config/app-config';
import { rowsOf } from '../../database/sql';
import { DELIVERIES_CHANNEL } from './deliveries-channel';
import type { DeliveryStatus } from './delivery.entity';
import type { AttemptRow } from './delivery.repository';
import { deliveriesOfEvent } from './event-deliveries';
import { boundBatch, type ReplayBatch } from './replay-batch';
import { sqlRetentionFloor } from './sql-id-floor';

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

const DELIVERY_COLUMNS = `d.id, d.store_id AS "storeId", d.event_id AS "eventId", d.webhook_id AS "webhookId",
  d.event_type AS "eventType", d.status, d.attempt_count AS "attemptCount", d.next_attempt_at AS "nextAttemptAt",
  (d.lease_token IS NOT NULL) AS leased, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
  d.created_at AS "createdAt", d.updated_at AS "updatedAt"`;

/** The first key of the advisory lock a replay or retry-failed holds on its endpoint (the second is the endpoint's). */
const REPLAY_LOCK = 0x48_4c_52_50; // 'HLRP'

/**
 * The events of the window that the endpoint subscribes to and has no delivery of yet, in id
 * order, at most `$7`. Ids bound the window as the times do (`idFloor`), so the store's index on
 * events serves it in order and the scan stops at the limit; the times keep it exact and let a
 * table partitioned by time skip the other partitions. An endpoint's own `webhook.disabled` is
 * never sent to it. `$8` is RETENTION_DAYS: nothing older than retention on the database's clock.
 */
const REPLAY_CANDIDATES = `
  SELECT e.id
  FROM webhooks w JOIN events e ON e.store_id = w.store_id AND e.type = ANY (w.events)
  WHERE w.id = $2 AND w.store_id = $1 AND w.is_active
    AND e.id >= $3 AND e.id < $4 AND e.created_at >= $5 AND e.created_at < $6 AND e.id >= ${sqlRetentionFloor('evt', '$8')}
    AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE ${deliveriesOfEvent('d', 'e')} AND d.webhook_id = w.id)
    AND NOT (e.type = 'webhook.disabled' AND e.body::jsonb #>> '{data,webhookId}' = w.id)
  ORDER BY e.id
  LIMIT $7`;

/**
 * A pending delivery, due now, for each of the events `$3` (between `$4` and `$5`, which lets the
 * table skip the other days), and a NOTIFY that wakes the workers when this commits. Delivery ids
 * take the event's time, as the fan-out's do. To an ordered endpoint they go in event id order,
 * before its later deliveries still waiting.
 */
const REPLAY = `
  WITH replayed AS (
    INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
    SELECT 'del_' || substr(e.id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), e.store_id, e.id, w.id, e.type, now(),
      w.ordered
    FROM webhooks w JOIN events e ON e.store_id = w.store_id
    WHERE w.id = $2 AND w.store_id = $1 AND w.is_active AND e.id = ANY ($3::text[]) AND e.id >= $4 AND e.id <= $5
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE ${deliveriesOfEvent('d', 'e')} AND d.webhook_id = w.id)
    ORDER BY e.id
    RETURNING 1
  ), woken AS (
    SELECT pg_notify('${DELIVERIES_CHANNEL}', '') FROM (SELECT 1 FROM replayed LIMIT 1) AS any_delivery
  )
  SELECT (SELECT count(*) FROM replayed)::int AS queued, (SELECT count(*) FROM woken)::int AS woken`;

/** A new cycle, due now; `restarted_at` starts the delivery's age afresh (DeliveryExpiry). */
const RESTART_SET = `status = 'pending', cycle_attempts = 0, next_attempt_at = now(), lease_token = NULL, restarted_at = now(),
  updated_at = now()`;

/**
 * The delivery log as the API reads it, and the manual retries that start a new cycle. The
 * worker's hot statements (claims, results) are DeliveryRepository's.
 *
 * A delivery older than retention is never made pending again (it reads as unknown to a retry):
 * retention drops a day once no delivery of it is pending, and nothing may make one pending after
 * that check (docs/reliability.md).
 */
@Injectable()
export class DeliveryLog {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** SQL for the lowest delivery id still within retention, RETENTION_DAYS being the parameter `param`. */
  private static floor(param: string): string {
    return sqlRetentionFloor('del', param);
  }

  async findInStore(storeId: string, id: string): Promise<(DeliveryRow & { body: string }) | null> {
    const rows: Array<DeliveryRow & { body: string }> = await this.dataSource.query(
      `SELECT ${DELIVERY_COLUMNS}, e.body FROM deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.id = $1 AND d.store_id = $2`,
      [id, storeId],
    );
    return rows[0] ?? null;
  }

  /** Just what a retry decides on (no envelope body). */
  async stateInStore(storeId: string, id: string): Promise<{ status: DeliveryStatus; webhookId: string; attemptCount: number } | null> {
    const rows: Array<{ status: DeliveryStatus; webhookId: string; attemptCount: number }> = await this.dataSource.query(
      `SELECT status, webhook_id AS "webhookId", attempt_count AS "attemptCount"
       FROM deliveries WHERE id = $1 AND store_id = $2 AND id >= ${DeliveryLog.floor('$3')}`,
      [id, storeId, this.config.retentionDays],
    );
    return rows[0] ?? null;
  }

  attemptsOf(deliveryId: string): Promise<AttemptRow[]> {
    return this.dataSource.query(
      `SELECT number, trigger, started_at AS "startedAt", duration_ms AS "durationMs", status_code AS "statusCode",
         error, response_body AS "responseBody"
       FROM delivery_attempts WHERE delivery_id = $1 ORDER BY number`,
      [deliveryId],
    );
  }

  /** Newest first, `limit + 1` rows. */
  pageForWebhook(storeId: string, webhookId: string, filter: DeliveryFilter): Promise<DeliveryRow[]> {
    const params: unknown[] = [storeId, webhookId, filter.limit + 1];
    const conditions = ['d.store_id = $1', 'd.webhook_id = $2'];
    if (filter.beforeId) conditions.push(`d.id < $${params.push(filter.beforeId)}`);
    if (filter.status) conditions.push(`d.status = $${params.push(filter.status)}`);
    if (filter.eventType) conditions.push(`d.event_type = $${params.push(filter.eventType)}`);
    return this.dataSource.query(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d WHERE ${conditions.join(' AND ')} ORDER BY d.id DESC LIMIT $3`,
      params,
    );
  }

  /** An event's deliveries carry its time in their ids: the range reads only its day's partition. */
  listForEvent(storeId: string, eventId: string): Promise<DeliveryRow[]> {
    const time = eventId.slice(eventId.indexOf('_') + 1, eventId.indexOf('_') + 11);
    return this.dataSource.query(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d
       WHERE d.store_id = $1 AND d.event_id = $2 AND d.id >= $3 AND d.id < $4 ORDER BY d.id`,
      [storeId, eventId, `del_${time}`, `del_${time}~`],
    );
  }

  /**
   * Starts a new cycle for a finished delivery; null when it is pending (or unknown), or has had
   * its MAX_ATTEMPTS_PER_DELIVERY attempts.
   */
  async restart(storeId: string, id: string): Promise<DeliveryRow | null> {
    const rows = await rowsOf<DeliveryRow>(
      this.dataSource,
      `UPDATE deliveries d SET ${RESTART_SET}
       WHERE d.id = $1 AND d.store_id = $2 AND d.status <> 'pending' AND d.id >= ${DeliveryLog.floor('$3')}
         AND d.attempt_count < $4
       RETURNING ${DELIVERY_COLUMNS}`,
      [id, storeId, this.config.retentionDays, this.config.maxAttemptsPerDelivery],
    );
    return rows[0] ?? null;
  }

  /**
   * Starts a new cycle for the endpoint's failed deliveries of events published at or after
   * `since` (all when not given), in event order, at most MAX_REPLAY_DELIVERIES of them (see
   * {@link boundBatch} for `next`). One that has had its MAX_ATTEMPTS_PER_DELIVERY attempts stays
   * failed. Null while another replay or retry-failed of the endpoint runs.
   */
  restartFailed(storeId: string, webhookId: string, since?: Date): Promise<QueuedBatch | null> {
    return this.exclusively(webhookId, async (manager) => {
      const candidates = await rowsOf<{ id: string }>(
        manager,
        `SELECT id FROM deliveries
         WHERE store_id = $1 AND webhook_id = $2 AND status = 'failed' AND id >= $3 AND id >= ${DeliveryLog.floor('$5')}
           AND attempt_count < $6
         ORDER BY id LIMIT $4`,
        [
          storeId,
          webhookId,
          idFloor('del', since?.getTime() ?? 0),
          this.config.maxReplayDeliveries + 1,
          this.config.retentionDays,
          this.config.maxAttemptsPerDelivery,
        ],
      );
      const batch = boundBatch(
        candidates.map((row) => row.id),
        this.config.maxReplayDeliveries,
      );
      if (batch.ids.length === 0) return { queued: 0, next: batch.next };
      const restarted = await rowsOf(
        manager,
        `UPDATE deliveries SET ${RESTART_SET}
         WHERE id = ANY ($1::text[]) AND store_id = $2 AND status = 'failed' AND id >= $3 AND id <= $4
         RETURNING id`,
        [batch.ids, storeId, batch.ids[0], batch.ids.at(-1)],
      );
      return { queued: restarted.length, next: batch.next };
    });
  }

  /**
   * Queues what the endpoint missed in `window` (see {@link REPLAY}), at most
   * MAX_REPLAY_DELIVERIES deliveries (see {@link boundBatch} for `next`). Null while another
   * replay or retry-failed of the endpoint runs.
   */
  replay(storeId: string, webhookId: string, window: { from: Date; until: Date }): Promise<QueuedBatch | null> {
    return this.exclusively(webhookId, async (manager) => {
      const candidates = await rowsOf<{ id: string }>(manager, REPLAY_CANDIDATES, [
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
      const rows = await rowsOf<{ queued: number }>(manager, REPLAY, [storeId, webhookId, batch.ids, batch.ids[0], batch.ids.at(-1)]);
      return { queued: rows[0].queued, next: batch.next };
    });
  }

  /**
   * Runs `work` in a transaction that holds the endpoint's replay lock, each statement under
   * REPLAY_TIMEOUT_MS (a timeout cancels it all, queuing nothing). Null, at once, when another
   * request holds the lock: two replays of one endpoint never run together.
   */
  private exclusively<T>(webhookId: string, work: (manager: EntityManager) => Promise<T>): Promise<T | null> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT set_config('statement_timeout', $1, true)`, [String(this.config.replayTimeoutMs)]);
      const [{ locked }] = await rowsOf<{ locked: boolean }>(manager, `SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked`, [
        REPLAY_LOCK,
        webhookId,
      ]);
      return locked ? work(manager) : null;
    });
  }
}
