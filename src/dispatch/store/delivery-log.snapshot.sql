-- find-delivery
SELECT d.id, d.store_id AS "storeId", d.event_id AS "eventId", d.webhook_id AS "webhookId",
d.event_type AS "eventType", d.status, d.attempt_count AS "attemptCount", d.next_attempt_at AS "nextAttemptAt",
(d.lease_token IS NOT NULL) AS leased, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
(SELECT a.duration_ms FROM delivery_attempts a
WHERE a.delivery_id = d.id AND a.store_id = d.store_id ORDER BY a.number DESC LIMIT 1) AS "lastDurationMs", d.created_at AS "createdAt", d.updated_at AS "updatedAt", e.body FROM deliveries d JOIN events e ON e.id = d.event_id AND e.store_id = d.store_id
WHERE d.id = $1 AND d.store_id = $2;

-- delivery-state
SELECT status, webhook_id AS "webhookId", attempt_count AS "attemptCount"
FROM deliveries WHERE id = $1 AND store_id = $2 AND id >= left(('del_' || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 45) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 40) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 35) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 30) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 25) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 20) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 15) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 10) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 5) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 0) & 31)::int + 1, 1)), 4 + 10 * ($3::int > 0)::int);

-- attempts-of-delivery
SELECT number, trigger, started_at AS "startedAt", duration_ms AS "durationMs", status_code AS "statusCode",
  error, response_body AS "responseBody"
FROM delivery_attempts WHERE delivery_id = $1 ORDER BY number;

-- endpoint-deliveries-page
SELECT d.id, d.store_id AS "storeId", d.event_id AS "eventId", d.webhook_id AS "webhookId",
d.event_type AS "eventType", d.status, d.attempt_count AS "attemptCount", d.next_attempt_at AS "nextAttemptAt",
(d.lease_token IS NOT NULL) AS leased, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
(SELECT a.duration_ms FROM delivery_attempts a
WHERE a.delivery_id = d.id AND a.store_id = d.store_id ORDER BY a.number DESC LIMIT 1) AS "lastDurationMs", d.created_at AS "createdAt", d.updated_at AS "updatedAt" FROM deliveries d
WHERE d.store_id = $1 AND d.webhook_id = $2
  AND ($4::text IS NULL OR d.id < $4) AND ($5::text IS NULL OR d.status = $5) AND ($6::text IS NULL OR d.event_type = $6)
ORDER BY d.id DESC LIMIT $3;

-- event-deliveries
SELECT d.id, d.store_id AS "storeId", d.event_id AS "eventId", d.webhook_id AS "webhookId",
d.event_type AS "eventType", d.status, d.attempt_count AS "attemptCount", d.next_attempt_at AS "nextAttemptAt",
(d.lease_token IS NOT NULL) AS leased, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
(SELECT a.duration_ms FROM delivery_attempts a
WHERE a.delivery_id = d.id AND a.store_id = d.store_id ORDER BY a.number DESC LIMIT 1) AS "lastDurationMs", d.created_at AS "createdAt", d.updated_at AS "updatedAt" FROM deliveries d
WHERE d.store_id = $1 AND d.event_id = $2 AND d.id >= $3 AND d.id < $4 ORDER BY d.id;

-- restart-delivery
WITH moved AS (
  DELETE FROM delivery_log d
  WHERE d.id = $1 AND d.store_id = $2 AND d.id >= left(('del_' || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 45) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 40) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 35) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 30) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 25) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 20) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 15) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 10) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 5) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $3::int)) * 1000), 0)::bigint >> 0) & 31)::int + 1, 1)), 4 + 10 * ($3::int > 0)::int) AND d.attempt_count < $4
  RETURNING d.*
), queued AS (
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, ordered, next_attempt_at, attempt_count, cycle_attempts,
    last_status_code, last_error, created_at, restarted_at, updated_at)
  SELECT id, store_id, event_id, webhook_id, event_type, ordered, now(), attempt_count, 0, last_status_code, last_error, created_at,
    now(), now()
  FROM moved
  RETURNING *
)
-- The last attempt joined by the parameters, not looked up per row: Citus runs no correlated
-- subquery over a CTE's rows.
SELECT d.id, d.store_id AS "storeId", d.event_id AS "eventId", d.webhook_id AS "webhookId",
d.event_type AS "eventType", d.status, d.attempt_count AS "attemptCount", d.next_attempt_at AS "nextAttemptAt",
(d.lease_token IS NOT NULL) AS leased, d.last_status_code AS "lastStatusCode", d.last_error AS "lastError",
a.duration_ms AS "lastDurationMs", d.created_at AS "createdAt", d.updated_at AS "updatedAt"
FROM (SELECT q.*, 'pending'::text AS status FROM queued q) d
LEFT JOIN (SELECT duration_ms FROM delivery_attempts WHERE delivery_id = $1 AND store_id = $2 ORDER BY number DESC LIMIT 1) a ON true;

-- failed-candidates
SELECT id FROM delivery_log
WHERE store_id = $1 AND webhook_id = $2 AND status = 'failed' AND id >= $3 AND id >= left(('del_' || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 45) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 40) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 35) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 30) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 25) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 20) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 15) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 10) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 5) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $5::int)) * 1000), 0)::bigint >> 0) & 31)::int + 1, 1)), 4 + 10 * ($5::int > 0)::int)
  AND attempt_count < $6
ORDER BY id LIMIT $4;

-- restart-failed
WITH moved AS (
  DELETE FROM delivery_log
  WHERE id = ANY ($1::text[]) AND store_id = $2 AND status = 'failed' AND id >= $3 AND id <= $4
  RETURNING *
), queued AS (
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, ordered, next_attempt_at, attempt_count, cycle_attempts,
    last_status_code, last_error, created_at, restarted_at, updated_at)
  SELECT id, store_id, event_id, webhook_id, event_type, ordered, now(), attempt_count, 0, last_status_code, last_error, created_at,
    now(), now()
  FROM moved
  RETURNING *
)
SELECT id FROM queued;

-- replay-candidates
SELECT e.id
FROM webhooks w JOIN events e ON e.store_id = w.store_id AND e.type = ANY (w.events)
WHERE w.id = $2 AND w.store_id = $1 AND w.is_active
  AND e.id >= $3 AND e.id < $4 AND e.created_at >= $5 AND e.created_at < $6 AND e.id >= left(('evt_' || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 45) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 40) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 35) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 30) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 25) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 20) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 15) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 10) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 5) & 31)::int + 1, 1) || substr('0123456789abcdefghjkmnpqrstvwxyz', ((greatest(floor(extract(epoch FROM now() - make_interval(hours => 24 * $8::int)) * 1000), 0)::bigint >> 0) & 31)::int + 1, 1)), 4 + 10 * ($8::int > 0)::int)
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id >= 'del_' || substr(e.id, 5, 10) AND d.id < 'del_' || substr(e.id, 5, 10) || '~' AND d.event_id = e.id AND d.store_id = e.store_id AND d.webhook_id = w.id)
  AND NOT (e.type = 'webhook.disabled' AND e.body::jsonb #>> '{data,webhookId}' = w.id)
  AND (w.filter_path IS NULL OR CASE WHEN w.filter ~* '\.[a-z_]+\s*\(\s*[^)\s]|like_regex'
  THEN hookline_filter_matches(e.body::jsonb, w.filter_path)
  ELSE jsonb_path_match_tz(e.body::jsonb, w.filter_path, '{}', true) IS TRUE END)
ORDER BY e.id
LIMIT $7;

-- replay
WITH replayed AS (
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
  SELECT 'del_' || substr(e.id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), e.store_id, e.id, w.id, e.type, now(),
    w.ordered
  FROM webhooks w JOIN events e ON e.store_id = w.store_id
  WHERE w.id = $2 AND w.store_id = $1 AND w.is_active AND e.id = ANY ($3::text[]) AND e.id >= $4 AND e.id <= $5
    AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id >= 'del_' || substr(e.id, 5, 10) AND d.id < 'del_' || substr(e.id, 5, 10) || '~' AND d.event_id = e.id AND d.store_id = e.store_id AND d.webhook_id = w.id)
  ORDER BY e.id
  RETURNING 1
), woken AS (
  SELECT pg_notify($6, '')::text FROM (SELECT 1 FROM replayed LIMIT 1) AS any_delivery
)
SELECT (SELECT count(*) FROM replayed)::int AS queued, (SELECT count(*) FROM woken)::int AS woken;

-- replay-statement-timeout
SELECT set_config('statement_timeout', $1, true);

-- try-replay-lock
SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked;
