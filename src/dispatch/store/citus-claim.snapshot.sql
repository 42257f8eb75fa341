-- due-stores
SELECT DISTINCT d.store_id FROM delivery_queue d
WHERE d.next_attempt_at <= now() + make_interval(secs => $1::double precision / 1000) AND (d.lease_until IS NULL OR d.lease_until <= now());

-- claim-one-store
WITH locked AS (
  SELECT 1 AS turn, d.id, d.store_id, d.webhook_id, d.event_id, d.ordered, d.next_attempt_at, d.lease_token, d.lease_until, d.attempt_count, d.cycle_attempts
  FROM delivery_queue d
  WHERE d.store_id = $8
    AND d.next_attempt_at <= now() + make_interval(secs => $7::double precision / 1000) AND (d.lease_until IS NULL OR d.lease_until <= now())
    AND NOT (d.webhook_id = ANY ($1::text[])) AND NOT ($8 = ANY ($9::text[]))
  ORDER BY d.store_id, d.next_attempt_at
  LIMIT least(coalesce(($10::jsonb ->> $8::text)::int, $11), $2)
  FOR UPDATE SKIP LOCKED
), gated AS (
  SELECT l.*, (NOT l.ordered OR NOT EXISTS (
    SELECT 1 FROM delivery_queue p
    WHERE p.store_id = $8 AND p.webhook_id = l.webhook_id AND p.ordered AND p.event_id < l.event_id
  )) AS free
  FROM locked l
), held AS (
  UPDATE delivery_queue d SET next_attempt_at = NULL, updated_at = now()
  FROM gated g WHERE d.store_id = $8 AND d.id = g.id AND NOT g.free AND g.lease_token IS NULL
  RETURNING d.id
), ranked AS (
  -- Each row carries what the steps below need of it: with hash joins off on these
  -- connections (dispatch-pool.ts), joining two of these lists again compares every row with
  -- every row; the free slots of endpoints are one JSON object, looked up by key.
  SELECT id, store_id, webhook_id, lease_token, lease_until, next_attempt_at, attempt_count, cycle_attempts,
    row_number() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, event_id) AS rn,
    coalesce(($3::jsonb ->> webhook_id)::int, $4) AS slots
  FROM gated WHERE free
), limited AS (
  -- Every row locked of a rate-limited endpoint takes its place in line, whatever its
  -- slots: those past the second's quota are put off, not left due for the next claim to read.
  -- Each endpoint looked up by its key (OFFSET 0 keeps the plan from joining the other way,
  -- reading every endpoint of every store, as a plan made while there were few once did).
  SELECT f.webhook_id, f.store_id, w.per_second, f.wanted
  FROM (SELECT webhook_id, store_id, count(*)::int AS wanted FROM ranked GROUP BY webhook_id, store_id) f
  CROSS JOIN LATERAL (
    SELECT w.rate_limit_per_second AS per_second FROM webhooks w WHERE w.id = f.webhook_id AND w.store_id = $8 OFFSET 0
  ) w
  WHERE w.per_second IS NOT NULL
), windows AS (
  INSERT INTO endpoint_rate_windows AS r (webhook_id, store_id, window_start, requests)
  -- In endpoint order, so that two claims lock the rows of several endpoints in the same order.
  SELECT webhook_id, $8, date_trunc('second', now()), wanted FROM limited ORDER BY webhook_id
  -- A claim whose statement began before another claim moved the row to the next second
  -- (it waited for the lock) counts in that later second: the window never goes back.
  ON CONFLICT (webhook_id, store_id) DO UPDATE SET
    requests = CASE WHEN r.window_start >= excluded.window_start THEN r.requests + excluded.requests ELSE excluded.requests END,
    window_start = GREATEST(r.window_start, excluded.window_start)
  RETURNING webhook_id, window_start, requests
), quota AS (
  SELECT l.webhook_id, l.per_second, w.window_start, w.requests - l.wanted AS before
  FROM limited l JOIN windows w ON w.webhook_id = l.webhook_id
), placed AS (
  SELECT r.*, r.rn <= r.slots AND (q.webhook_id IS NULL OR q.before + r.rn <= q.per_second) AS go,
    q.webhook_id IS NOT NULL AND q.before + r.rn > q.per_second AS put_off,
    -- Paced from this claim, a second on and then a tenth of the limit each tenth of a second:
    -- a full burst late in one second followed at once by the next second's whole quota would
    -- put twice the limit in one second as the receiver sees it.
    now() + make_interval(secs => (1 + floor((q.before + r.rn - 1 - q.per_second) / ceil(q.per_second / 10.0))
      * ceil(q.per_second / 10.0) / q.per_second)::double precision) AS put_off_to
  FROM ranked r LEFT JOIN quota q ON q.webhook_id = r.webhook_id
), chosen AS (
  SELECT * FROM placed WHERE go
), deferred AS (
  -- Only the rows put off are looked up (none when no endpoint is limited), each by its key.
  UPDATE delivery_queue d SET next_attempt_at = p.put_off_to, updated_at = now()
  FROM placed p
  WHERE d.store_id = $8 AND d.id = p.id AND p.put_off AND p.lease_token IS NULL
  RETURNING d.next_attempt_at
), interrupted AS (
  INSERT INTO delivery_attempts (delivery_id, store_id, number, trigger, started_at, duration_ms, status_code, error, response_body)
  SELECT c.id, $8, c.attempt_count,
    CASE WHEN c.cycle_attempts = 1 AND c.attempt_count > 1 THEN 'manual' ELSE 'scheduled' END,
    c.lease_until - make_interval(secs => $5::double precision / 1000), 0, NULL, $12::text, NULL
  FROM chosen c
  WHERE c.lease_token IS NOT NULL AND c.attempt_count > 0
  ON CONFLICT DO NOTHING
), claimed AS (
  -- Only the chosen rows, each found by its key; the event and the endpoint are looked up
  -- below, one row each, so that the plan cannot start from them. No column an index of the
  -- queue holds is written, so the update is HOT: no index entry, the old version pruned in place.
  UPDATE delivery_queue d
  SET lease_until = now() + make_interval(secs => $5::double precision / 1000), lease_token = $6,
      attempt_count = d.attempt_count + 1, cycle_attempts = d.cycle_attempts + 1, updated_at = now()
  FROM chosen c
  WHERE d.store_id = $8 AND d.id = c.id
  RETURNING d.id, d.store_id, d.event_id, d.webhook_id, d.event_type, d.attempt_count, d.cycle_attempts, d.ordered
), sent AS (
  SELECT d.id, d.event_id AS "eventId", d.webhook_id AS "webhookId", d.store_id AS "storeId",
    d.attempt_count AS "attemptNumber", d.cycle_attempts AS "cycleAttempt", d.event_type AS "eventType",
    e.body, e.traceparent,
    w.url, w.secret_encrypted AS "secretSealed", w.is_active AS "webhookActive",
    CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END AS "previousSecretSealed",
    CASE WHEN w.headers <> '{}'::jsonb OR w.auth_encrypted IS NOT NULL OR w.tls_encrypted IS NOT NULL THEN (extract(epoch FROM w.updated_at) * 1000000)::bigint::text END AS "headersRevision", w.retry_schedule AS "retrySchedule", d.ordered
  -- An event's body and trace are read and answered once, on one of its deliveries (`carries`):
  -- DeliveryRepository gives them to its other deliveries, not each endpoint's row its own copy.
  FROM (SELECT c.*, row_number() OVER (PARTITION BY c.event_id) = 1 AS carries FROM claimed c) d
  -- By its key, one row each, whatever the statistics said when the plan was made (above).
  LEFT JOIN LATERAL (
    SELECT e.body, e.traceparent FROM events e WHERE d.carries AND e.id = d.event_id AND e.store_id = $8 OFFSET 0
  ) e ON true
  CROSS JOIN LATERAL (SELECT * FROM webhooks w WHERE w.id = d.webhook_id AND w.store_id = $8 OFFSET 0) w
)
SELECT c.*, false AS "turnsCut", $8::text AS "lastStore",
  CASE WHEN c.id IS NOT DISTINCT FROM (SELECT min(id) FROM sent) THEN
    CASE WHEN (SELECT count(*) FROM locked) >= least(coalesce(($10::jsonb ->> $8::text)::int, $11), $2) THEN ARRAY[$8::text] ELSE '{}'::text[] END
  END AS "crowdedStores",
  CASE WHEN c.id IS NOT DISTINCT FROM (SELECT min(id) FROM sent) THEN
    (SELECT array_agg(DISTINCT extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000) FROM deferred)
  END AS "deferredDueInMs"
FROM (SELECT 1) m LEFT JOIN sent c ON true;
