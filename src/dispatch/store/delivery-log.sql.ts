import { statement } from '../../database/sql';
import { deliveriesOfEvent } from './event-deliveries';
import { sqlRetentionFloor } from './sql-id-floor';
import { passesFilter } from '../../webhooks/content-filter';

/** A delivery as the API shows it, with `lastDurationMs` the SQL of its last attempt's duration. */
function deliveryColumns(lastDurationMs: string): string {
  return `d.id, d.store_id AS "storeId", d.event_id AS "eventId", d.webhook_id AS "webhookId",
  d.event_type AS "eventType", d.status, d.attempt_count AS "attemptCount", d.next_attempt_at AS "nextAttemptAt",
  (d.lease_token IS NOT NULL) AS leased, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
  ${lastDurationMs} AS "lastDurationMs", d.created_at AS "createdAt", d.updated_at AS "updatedAt"`;
}

/**
 * The last attempt's duration is read from that attempt: one lookup by key, in the one partition
 * of the delivery's day, for each row returned (after LIMIT), so a page costs a few index reads
 * more and the worker's writes stay as they are.
 */
const DELIVERY_COLUMNS = deliveryColumns(`(SELECT a.duration_ms FROM delivery_attempts a
  WHERE a.delivery_id = d.id AND a.store_id = d.store_id ORDER BY a.number DESC LIMIT 1)`);

/**
 * A new cycle for the ended deliveries `moved` (a CTE answering their log rows whole, deleted):
 * back in the queue, due now, as `queued`. `restarted_at` starts the delivery's age afresh
 * (DeliveryExpiry). The log is written once per cycle: a person's retry is the one time a row
 * leaves it.
 */
const requeue = (moved: string): string => `queued AS (
    INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, ordered, next_attempt_at, attempt_count, cycle_attempts,
      last_status_code, last_error, created_at, restarted_at, updated_at)
    SELECT id, store_id, event_id, webhook_id, event_type, ordered, now(), attempt_count, 0, last_status_code, last_error, created_at,
      now(), now()
    FROM ${moved}
    RETURNING *
  )`;

/** $1 id, $2 store: one delivery with its event's body. */
export const FIND_DELIVERY = statement(
  'find-delivery',
  `
  SELECT ${DELIVERY_COLUMNS}, e.body FROM deliveries d JOIN events e ON e.id = d.event_id AND e.store_id = d.store_id
  WHERE d.id = $1 AND d.store_id = $2`,
);

/** $1 id, $2 store, $3 RETENTION_DAYS: just what a retry decides on (no envelope body). */
export const DELIVERY_STATE = statement(
  'delivery-state',
  `
  SELECT status, webhook_id AS "webhookId", attempt_count AS "attemptCount"
  FROM deliveries WHERE id = $1 AND store_id = $2 AND id >= ${sqlRetentionFloor('del', '$3')}`,
);

/** $1 delivery: its attempts in order. */
export const ATTEMPTS_OF_DELIVERY = statement(
  'attempts-of-delivery',
  `
  SELECT number, trigger, started_at AS "startedAt", duration_ms AS "durationMs", status_code AS "statusCode",
    error, response_body AS "responseBody"
  FROM delivery_attempts WHERE delivery_id = $1 ORDER BY number`,
);

/**
 * $1 store, $2 endpoint, $3 limit; the optional filters $4 before id, $5 status, $6 event type
 * (null when not asked: each query plans afresh through TypeORM, so a null filter costs nothing).
 */
export const ENDPOINT_DELIVERIES_PAGE = statement(
  'endpoint-deliveries-page',
  `
  SELECT ${DELIVERY_COLUMNS} FROM deliveries d
  WHERE d.store_id = $1 AND d.webhook_id = $2
    AND ($4::text IS NULL OR d.id < $4) AND ($5::text IS NULL OR d.status = $5) AND ($6::text IS NULL OR d.event_type = $6)
  ORDER BY d.id DESC LIMIT $3`,
);

/** $1 store, $2 event, [$3, $4) the id range of its day: an event's deliveries carry its time in their ids. */
export const EVENT_DELIVERIES = statement(
  'event-deliveries',
  `
  SELECT ${DELIVERY_COLUMNS} FROM deliveries d
  WHERE d.store_id = $1 AND d.event_id = $2 AND d.id >= $3 AND d.id < $4 ORDER BY d.id`,
);

/** $1 id, $2 store, $3 RETENTION_DAYS, $4 MAX_ATTEMPTS_PER_DELIVERY: a new cycle for a finished delivery. */
export const RESTART_DELIVERY = statement(
  'restart-delivery',
  `
  WITH moved AS (
    DELETE FROM delivery_log d
    WHERE d.id = $1 AND d.store_id = $2 AND d.id >= ${sqlRetentionFloor('del', '$3')} AND d.attempt_count < $4
    RETURNING d.*
  ), ${requeue('moved')}
  -- The last attempt joined by the parameters, not looked up per row: Citus runs no correlated
  -- subquery over a CTE's rows.
  SELECT ${deliveryColumns('a.duration_ms')}
  FROM (SELECT q.*, 'pending'::text AS status FROM queued q) d
  LEFT JOIN (SELECT duration_ms FROM delivery_attempts WHERE delivery_id = $1 AND store_id = $2 ORDER BY number DESC LIMIT 1) a ON true`,
);

/**
 * $1 store, $2 endpoint, $3 lowest id ('since'), $4 limit, $5 RETENTION_DAYS,
 * $6 MAX_ATTEMPTS_PER_DELIVERY: the failed deliveries a retry-failed may restart, in order.
 */
export const FAILED_CANDIDATES = statement(
  'failed-candidates',
  `
  SELECT id FROM delivery_log
  WHERE store_id = $1 AND webhook_id = $2 AND status = 'failed' AND id >= $3 AND id >= ${sqlRetentionFloor('del', '$5')}
    AND attempt_count < $6
  ORDER BY id LIMIT $4`,
);

/** $1 ids, $2 store, [$3, $4] their id range: a new cycle for each that is still failed. */
export const RESTART_FAILED = statement(
  'restart-failed',
  `
  WITH moved AS (
    DELETE FROM delivery_log
    WHERE id = ANY ($1::text[]) AND store_id = $2 AND status = 'failed' AND id >= $3 AND id <= $4
    RETURNING *
  ), ${requeue('moved')}
  SELECT id FROM queued`,
);

/**
 * The events of the window that the endpoint subscribes to and has no delivery of yet, in id
 * order, at most `$7`. Ids bound the window as the times do (`idFloor`), so the store's index on
 * events serves it in order and the scan stops at the limit; the times keep it exact and let a
 * table partitioned by time skip the other partitions. An endpoint's own `webhook.disabled` is
 * never sent to it, nor an event its content filter does not match now. `$8` is RETENTION_DAYS:
 * nothing older than retention on the database's clock.
 */
export const REPLAY_CANDIDATES = statement(
  'replay-candidates',
  `
  SELECT e.id
  FROM webhooks w JOIN events e ON e.store_id = w.store_id AND e.type = ANY (w.events)
  WHERE w.id = $2 AND w.store_id = $1 AND w.is_active
    AND e.id >= $3 AND e.id < $4 AND e.created_at >= $5 AND e.created_at < $6 AND e.id >= ${sqlRetentionFloor('evt', '$8')}
    AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE ${deliveriesOfEvent('d', 'e')} AND d.store_id = e.store_id AND d.webhook_id = w.id)
    AND NOT (e.type = 'webhook.disabled' AND e.body::jsonb #>> '{data,webhookId}' = w.id)
    AND ${passesFilter('w', 'e.body::jsonb')}
  ORDER BY e.id
  LIMIT $7`,
);

/**
 * A pending delivery, due now, for each of the events `$3` (between `$4` and `$5`, which lets the
 * table skip the other days), and a NOTIFY on `$6` that wakes the workers when this commits.
 * Delivery ids take the event's time, as the fan-out's do. To an ordered endpoint they go in
 * event id order, before its later deliveries still waiting.
 */
export const REPLAY = statement(
  'replay',
  `
  WITH replayed AS (
    INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
    SELECT 'del_' || substr(e.id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), e.store_id, e.id, w.id, e.type, now(),
      w.ordered
    FROM webhooks w JOIN events e ON e.store_id = w.store_id
    WHERE w.id = $2 AND w.store_id = $1 AND w.is_active AND e.id = ANY ($3::text[]) AND e.id >= $4 AND e.id <= $5
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE ${deliveriesOfEvent('d', 'e')} AND d.store_id = e.store_id AND d.webhook_id = w.id)
    ORDER BY e.id
    RETURNING 1
  ), woken AS (
    SELECT pg_notify($6, '')::text FROM (SELECT 1 FROM replayed LIMIT 1) AS any_delivery
  )
  SELECT (SELECT count(*) FROM replayed)::int AS queued, (SELECT count(*) FROM woken)::int AS woken`,
);

/** $1 REPLAY_TIMEOUT_MS: the limit on each statement of the replay's transaction. */
export const REPLAY_STATEMENT_TIMEOUT = statement('replay-statement-timeout', `SELECT set_config('statement_timeout', $1, true)`);

/** $1 the replay lock's first key, $2 the endpoint: the lock, without waiting for it. */
export const TRY_REPLAY_LOCK = statement('try-replay-lock', `SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked`);
