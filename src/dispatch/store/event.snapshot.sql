-- publish
WITH key AS (
  INSERT INTO idempotency_keys (store_id, key, event_id)
  SELECT $2, $5, $1 WHERE $5::text IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING 1
), ev AS (
  INSERT INTO events (id, store_id, type, body, created_at, traceparent)
  SELECT $1, $2, $3, $4, $6, $9::text WHERE $5::text IS NULL OR EXISTS (SELECT 1 FROM key)
  RETURNING id, body
), fanned_out AS (
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
  SELECT 'del_' || $7 || left(replace(gen_random_uuid()::text, '-', ''), 16), $2, ev.id, w.id, $3,
    now() + make_interval(secs => $8::double precision / 1000), w.ordered
  -- The envelope parsed here, once per event (OFFSET 0), not in RETURNING: on a Citus cluster
  -- RETURNING runs on the shard, where its look at every store's endpoints cannot run.
  FROM (SELECT id, CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE filter IS NOT NULL) THEN body::jsonb END AS envelope FROM ev OFFSET 0) ev
  JOIN webhooks w ON w.store_id = $2 AND w.is_active AND $3 = ANY (w.events) AND (w.filter_path IS NULL OR CASE WHEN w.filter ~* '\.[a-z_]+\s*\(\s*[^)\s]|like_regex'
  THEN hookline_filter_matches(ev.envelope, w.filter_path)
  ELSE jsonb_path_match_tz(ev.envelope, w.filter_path, '{}', true) IS TRUE END)
  RETURNING 1
), woken AS (
  -- As text: Citus keeps a CTE's rows as a result of its own, which a void column cannot be.
  SELECT pg_notify($10, '')::text FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery
)
SELECT (SELECT count(*) FROM ev)::int AS inserted,
  (SELECT count(*) FROM fanned_out)::int AS deliveries,
  (SELECT count(*) FROM woken)::int AS woken;

-- publish-many
WITH input AS (
  SELECT * FROM json_to_recordset($1::json)
    AS i(id text, store_id text, type text, body text, created_at timestamptz, traceparent text)
), ev AS (
  INSERT INTO events (id, store_id, type, body, created_at, traceparent)
  SELECT id, store_id, type, body, created_at, traceparent FROM input

  RETURNING id, store_id, type, body
), fanned_out AS (
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
  SELECT 'del_' || substr(p.event_id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), p.store_id, p.event_id, p.webhook_id, p.type, now() + make_interval(secs => $2::double precision / 1000), p.ordered
  FROM (SELECT ev.id AS event_id, ev.store_id, ev.type, w.id AS webhook_id, w.ordered
        FROM (SELECT id, store_id, type, CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE filter IS NOT NULL) THEN body::jsonb END AS envelope FROM ev OFFSET 0) ev
        JOIN webhooks w ON w.store_id = ev.store_id AND w.is_active AND ev.type = ANY (w.events)
          AND (w.filter_path IS NULL OR CASE WHEN w.filter ~* '\.[a-z_]+\s*\(\s*[^)\s]|like_regex'
  THEN hookline_filter_matches(ev.envelope, w.filter_path)
  ELSE jsonb_path_match_tz(ev.envelope, w.filter_path, '{}', true) IS TRUE END)) p
  RETURNING event_id
), woken AS (
  SELECT pg_notify($3, '')::text FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery
)
SELECT coalesce((SELECT json_object_agg(event_id, n) FROM (SELECT event_id, count(*)::int AS n FROM fanned_out GROUP BY event_id) c), '{}') AS counts,
  (SELECT count(*) FROM ev)::int AS inserted,
  '[]'::json AS skipped,
  (SELECT count(*) FROM woken)::int AS woken,
  '[]'::json AS leased;

-- publish-many-hand-off
WITH input AS (
  SELECT * FROM json_to_recordset($1::json)
    AS i(id text, store_id text, type text, body text, created_at timestamptz, traceparent text)
), ev AS (
  INSERT INTO events (id, store_id, type, body, created_at, traceparent)
  SELECT id, store_id, type, body, created_at, traceparent FROM input

  RETURNING id, store_id, type, body
), targets AS (
  SELECT ev.id AS event_id, ev.store_id, ev.type, w.id AS webhook_id, w.ordered, w.rate_limit_per_second IS NOT NULL AS rate_limited,
    row_number() OVER (PARTITION BY w.id ORDER BY ev.id) AS k
  FROM (SELECT id, store_id, type, CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE filter IS NOT NULL) THEN body::jsonb END AS envelope FROM ev OFFSET 0) ev
  JOIN webhooks w ON w.store_id = ev.store_id AND w.is_active AND ev.type = ANY (w.events)
    AND (w.filter_path IS NULL OR CASE WHEN w.filter ~* '\.[a-z_]+\s*\(\s*[^)\s]|like_regex'
  THEN hookline_filter_matches(ev.envelope, w.filter_path)
  ELSE jsonb_path_match_tz(ev.envelope, w.filter_path, '{}', true) IS TRUE END)
), fitting AS (
  -- The free slots of endpoints and stores are JSON objects looked up by key, not lists joined
  -- row by row (hash joins are off on the dispatcher's connections).
  SELECT t.*, (NOT (t.webhook_id = ANY ($5::text[])) AND t.k <= coalesce(($6::jsonb ->> t.webhook_id)::int, $7)
    AND NOT t.ordered AND NOT t.rate_limited AND NOT (t.store_id = ANY ($10::text[]))) AS fits
  FROM targets t
), fitting_store AS (
  SELECT f.*, (f.fits AND row_number() OVER (PARTITION BY f.fits, f.store_id ORDER BY f.event_id, f.webhook_id)
    <= coalesce(($11::jsonb ->> f.store_id)::int, $12)) AS fits_store
  FROM fitting f
), placed AS (
  SELECT f.*, (f.fits_store AND row_number() OVER (PARTITION BY f.fits_store ORDER BY f.event_id, f.webhook_id) <= $4) AS leased
  FROM fitting_store f
), fanned_out AS (
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, lease_token, lease_until,
    attempt_count, cycle_attempts, ordered)
  SELECT 'del_' || substr(p.event_id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), p.store_id, p.event_id, p.webhook_id, p.type,
    now() + make_interval(secs => CASE WHEN p.leased THEN 0 ELSE $2::double precision END / 1000),
    CASE WHEN p.leased THEN $9 END, CASE WHEN p.leased THEN now() + make_interval(secs => $8::double precision / 1000) END,
    p.leased::int, p.leased::int, p.ordered
  FROM placed p
  RETURNING id, event_id, webhook_id, store_id, lease_token IS NOT NULL AS leased
), woken AS (
  SELECT pg_notify($3, CASE WHEN bool_and(f.webhook_id = ANY ($5::text[]) OR f.store_id = ANY ($10::text[])) THEN $9 ELSE '' END)::text
  FROM fanned_out f WHERE NOT f.leased HAVING count(*) > 0
)
SELECT coalesce((SELECT json_object_agg(event_id, n) FROM (SELECT event_id, count(*)::int AS n FROM fanned_out GROUP BY event_id) c), '{}') AS counts,
  (SELECT count(*) FROM ev)::int AS inserted,
  '[]'::json AS skipped,
  (SELECT count(*) FROM woken)::int AS woken,
  (SELECT coalesce(json_agg(json_build_array(f.id, f.event_id, f.webhook_id, w.url, w.secret_encrypted,
     CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END, CASE WHEN w.headers <> '{}'::jsonb OR w.auth_encrypted IS NOT NULL OR w.tls_encrypted IS NOT NULL THEN (extract(epoch FROM w.updated_at) * 1000000)::bigint::text END, w.retry_schedule)), '[]')
   FROM fanned_out f JOIN webhooks w ON w.id = f.webhook_id AND w.store_id = f.store_id WHERE f.leased) AS leased;

-- publish-many-keys
WITH input AS (
  SELECT * FROM json_to_recordset($1::json)
    AS i(id text, store_id text, type text, body text, created_at timestamptz, traceparent text, idempotency_key text)
), keyed AS (
  INSERT INTO idempotency_keys (store_id, key, event_id)
  SELECT store_id, idempotency_key, id FROM input WHERE idempotency_key IS NOT NULL
  ORDER BY idempotency_key ON CONFLICT DO NOTHING
  RETURNING event_id
), ev AS (
  INSERT INTO events (id, store_id, type, body, created_at, traceparent)
  SELECT id, store_id, type, body, created_at, traceparent FROM input
  WHERE idempotency_key IS NULL OR id IN (SELECT event_id FROM keyed)
  RETURNING id, store_id, type, body
), fanned_out AS (
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
  SELECT 'del_' || substr(p.event_id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), p.store_id, p.event_id, p.webhook_id, p.type, now() + make_interval(secs => $2::double precision / 1000), p.ordered
  FROM (SELECT ev.id AS event_id, ev.store_id, ev.type, w.id AS webhook_id, w.ordered
        FROM (SELECT id, store_id, type, CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE filter IS NOT NULL) THEN body::jsonb END AS envelope FROM ev OFFSET 0) ev
        JOIN webhooks w ON w.store_id = ev.store_id AND w.is_active AND ev.type = ANY (w.events)
          AND (w.filter_path IS NULL OR CASE WHEN w.filter ~* '\.[a-z_]+\s*\(\s*[^)\s]|like_regex'
  THEN hookline_filter_matches(ev.envelope, w.filter_path)
  ELSE jsonb_path_match_tz(ev.envelope, w.filter_path, '{}', true) IS TRUE END)) p
  RETURNING event_id
), woken AS (
  SELECT pg_notify($3, '')::text FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery
)
SELECT coalesce((SELECT json_object_agg(event_id, n) FROM (SELECT event_id, count(*)::int AS n FROM fanned_out GROUP BY event_id) c), '{}') AS counts,
  (SELECT count(*) FROM ev)::int AS inserted,
  (SELECT coalesce(json_agg(i.id), '[]') FROM input i WHERE NOT EXISTS (SELECT 1 FROM ev WHERE ev.id = i.id)) AS skipped,
  (SELECT count(*) FROM woken)::int AS woken,
  '[]'::json AS leased;

-- publish-many-keys-hand-off
WITH input AS (
  SELECT * FROM json_to_recordset($1::json)
    AS i(id text, store_id text, type text, body text, created_at timestamptz, traceparent text, idempotency_key text)
), keyed AS (
  INSERT INTO idempotency_keys (store_id, key, event_id)
  SELECT store_id, idempotency_key, id FROM input WHERE idempotency_key IS NOT NULL
  ORDER BY idempotency_key ON CONFLICT DO NOTHING
  RETURNING event_id
), ev AS (
  INSERT INTO events (id, store_id, type, body, created_at, traceparent)
  SELECT id, store_id, type, body, created_at, traceparent FROM input
  WHERE idempotency_key IS NULL OR id IN (SELECT event_id FROM keyed)
  RETURNING id, store_id, type, body
), targets AS (
  SELECT ev.id AS event_id, ev.store_id, ev.type, w.id AS webhook_id, w.ordered, w.rate_limit_per_second IS NOT NULL AS rate_limited,
    row_number() OVER (PARTITION BY w.id ORDER BY ev.id) AS k
  FROM (SELECT id, store_id, type, CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE filter IS NOT NULL) THEN body::jsonb END AS envelope FROM ev OFFSET 0) ev
  JOIN webhooks w ON w.store_id = ev.store_id AND w.is_active AND ev.type = ANY (w.events)
    AND (w.filter_path IS NULL OR CASE WHEN w.filter ~* '\.[a-z_]+\s*\(\s*[^)\s]|like_regex'
  THEN hookline_filter_matches(ev.envelope, w.filter_path)
  ELSE jsonb_path_match_tz(ev.envelope, w.filter_path, '{}', true) IS TRUE END)
), fitting AS (
  -- The free slots of endpoints and stores are JSON objects looked up by key, not lists joined
  -- row by row (hash joins are off on the dispatcher's connections).
  SELECT t.*, (NOT (t.webhook_id = ANY ($5::text[])) AND t.k <= coalesce(($6::jsonb ->> t.webhook_id)::int, $7)
    AND NOT t.ordered AND NOT t.rate_limited AND NOT (t.store_id = ANY ($10::text[]))) AS fits
  FROM targets t
), fitting_store AS (
  SELECT f.*, (f.fits AND row_number() OVER (PARTITION BY f.fits, f.store_id ORDER BY f.event_id, f.webhook_id)
    <= coalesce(($11::jsonb ->> f.store_id)::int, $12)) AS fits_store
  FROM fitting f
), placed AS (
  SELECT f.*, (f.fits_store AND row_number() OVER (PARTITION BY f.fits_store ORDER BY f.event_id, f.webhook_id) <= $4) AS leased
  FROM fitting_store f
), fanned_out AS (
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, lease_token, lease_until,
    attempt_count, cycle_attempts, ordered)
  SELECT 'del_' || substr(p.event_id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), p.store_id, p.event_id, p.webhook_id, p.type,
    now() + make_interval(secs => CASE WHEN p.leased THEN 0 ELSE $2::double precision END / 1000),
    CASE WHEN p.leased THEN $9 END, CASE WHEN p.leased THEN now() + make_interval(secs => $8::double precision / 1000) END,
    p.leased::int, p.leased::int, p.ordered
  FROM placed p
  RETURNING id, event_id, webhook_id, store_id, lease_token IS NOT NULL AS leased
), woken AS (
  SELECT pg_notify($3, CASE WHEN bool_and(f.webhook_id = ANY ($5::text[]) OR f.store_id = ANY ($10::text[])) THEN $9 ELSE '' END)::text
  FROM fanned_out f WHERE NOT f.leased HAVING count(*) > 0
)
SELECT coalesce((SELECT json_object_agg(event_id, n) FROM (SELECT event_id, count(*)::int AS n FROM fanned_out GROUP BY event_id) c), '{}') AS counts,
  (SELECT count(*) FROM ev)::int AS inserted,
  (SELECT coalesce(json_agg(i.id), '[]') FROM input i WHERE NOT EXISTS (SELECT 1 FROM ev WHERE ev.id = i.id)) AS skipped,
  (SELECT count(*) FROM woken)::int AS woken,
  (SELECT coalesce(json_agg(json_build_array(f.id, f.event_id, f.webhook_id, w.url, w.secret_encrypted,
     CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END, CASE WHEN w.headers <> '{}'::jsonb OR w.auth_encrypted IS NOT NULL OR w.tls_encrypted IS NOT NULL THEN (extract(epoch FROM w.updated_at) * 1000000)::bigint::text END, w.retry_schedule)), '[]')
   FROM fanned_out f JOIN webhooks w ON w.id = f.webhook_id AND w.store_id = f.store_id WHERE f.leased) AS leased;

-- insert-event
INSERT INTO events (id, store_id, type, body, created_at, traceparent) VALUES ($1, $2, $3, $4, $5, $6);

-- expire-idempotency-key
DELETE FROM idempotency_keys k
WHERE k.store_id = $1 AND k.key = $2
  AND (k.created_at < now() - make_interval(hours => $3)
    OR NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id AND e.store_id = k.store_id));

-- expire-idempotency-keys-of-batch
DELETE FROM idempotency_keys k
WHERE k.store_id = $1 AND k.key = ANY ($2::text[])
  AND (k.created_at < now() - make_interval(hours => $3)
    OR NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id AND e.store_id = k.store_id));

-- events-by-idempotency-keys
SELECT k.key, e.id, e.type, e.body, e.created_at AS "createdAt",
  (SELECT count(*)::int FROM deliveries d WHERE d.id >= 'del_' || substr(e.id, 5, 10) AND d.id < 'del_' || substr(e.id, 5, 10) || '~' AND d.event_id = e.id AND d.store_id = e.store_id) AS deliveries
FROM idempotency_keys k JOIN events e ON e.id = k.event_id AND e.store_id = k.store_id
WHERE k.store_id = $1 AND k.key = ANY ($2::text[]);

-- find-event
SELECT id, type, body, created_at AS "createdAt" FROM events WHERE id = $1 AND store_id = $2;

-- expire-idempotency-keys
DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1);
