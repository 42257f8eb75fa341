import { statement } from '../../database/sql';
import { envelopeForFilters, passesFilter } from '../../webhooks/content-filter';
import { headersRevision } from '../../webhooks/webhook.repository';
import { deliveriesOfEvent } from './event-deliveries';

/**
 * The whole of a publish in one statement, so one round trip and no explicit transaction: insert
 * the event (or nothing, when its Idempotency-Key is taken), one pending delivery for each of the
 * store's active endpoints subscribed to the type whose content filter, if any, it matches, due
 * after `$8` ms, and a NOTIFY on `$10` that wakes the workers when (and only if) this commits. Delivery ids
 * are `del_` + the event's time part + 64 random bits, so they sort by time like every other id and
 * fall in their event's day partition once they end in the log (every writer of deliveries keeps
 * that: retention drops a day's events and ended deliveries together).
 */
export const PUBLISH = statement(
  'publish',
  `
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
    FROM (SELECT id, ${envelopeForFilters('body')} AS envelope FROM ev OFFSET 0) ev
    JOIN webhooks w ON w.store_id = $2 AND w.is_active AND $3 = ANY (w.events) AND ${passesFilter('w', 'ev.envelope')}
    RETURNING 1
  ), woken AS (
    -- As text: Citus keeps a CTE's rows as a result of its own, which a void column cannot be.
    SELECT pg_notify($10, '')::text FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery
  )
  SELECT (SELECT count(*) FROM ev)::int AS inserted,
    (SELECT count(*) FROM fanned_out)::int AS deliveries,
    (SELECT count(*) FROM woken)::int AS woken`,
);

/**
 * {@link PUBLISH} for many events at once: the events, their deliveries and one NOTIFY in one
 * statement and one commit, whatever the number of events (json_to_recordset, no statement per
 * event). Answers each event's fan-out count. A delivery's id takes its event's time part
 * (`evt_` + 10 characters).
 *
 * With Idempotency-Keys (`withKeys`), an event whose key another event of its store holds is left
 * out, with no deliveries, and its id is answered in `skipped`; keys are taken in their sort
 * order, so that two batches sharing keys wait for each other instead of deadlocking.
 *
 * `$3` is the channel of the NOTIFY. With a hand-off (`handOff`, `$4` > 0) the first `$4` deliveries, within the per-endpoint and
 * per-store slots, are written already leased to the publishing process's worker, as a claim would lease them, and
 * come back with their endpoint's URL and secret: that worker sends them at once, without a claim
 * round trip. Deliveries of ordered or rate-limited endpoints are never handed off: only a claim
 * knows whether an earlier one is pending or the endpoint's second is used up. The others are
 * written due and wake the workers; when they all belong to endpoints or stores
 * whose slots in that worker are all taken, the NOTIFY carries its lease token, so that it does not
 * wake itself (a freed share of such an endpoint's or store's slots does). A leased delivery whose worker dies comes
 * back when its lease ends, like any claim. Without a hand-off the deliveries go straight from the
 * join to the insert: no window, no sort, which is most of what a batch of 1,000 events costs
 * beyond the inserts themselves.
 */
function publishManyStatement({ withKeys, handOff }: { withKeys: boolean; handOff: boolean }): string {
  // Keys go to their own table first (a unique index on the partitioned events would have to hold
  // the event's id); an event is written only if its key was free.
  const input = `
  WITH input AS (
    SELECT * FROM json_to_recordset($1::json)
      AS i(id text, store_id text, type text, body text, created_at timestamptz, traceparent text${withKeys ? ', idempotency_key text' : ''})
  )${
    withKeys
      ? `, keyed AS (
    INSERT INTO idempotency_keys (store_id, key, event_id)
    SELECT store_id, idempotency_key, id FROM input WHERE idempotency_key IS NOT NULL
    ORDER BY idempotency_key ON CONFLICT DO NOTHING
    RETURNING event_id
  )`
      : ''
  }, ev AS (
    INSERT INTO events (id, store_id, type, body, created_at, traceparent)
    SELECT id, store_id, type, body, created_at, traceparent FROM input
    ${withKeys ? 'WHERE idempotency_key IS NULL OR id IN (SELECT event_id FROM keyed)' : ''}
    RETURNING id, store_id, type, body
  )`;
  const deliveryId = `'del_' || substr(p.event_id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16)`;
  const answer = (leased: string): string => `
  SELECT coalesce((SELECT json_object_agg(event_id, n) FROM (SELECT event_id, count(*)::int AS n FROM fanned_out GROUP BY event_id) c), '{}') AS counts,
    (SELECT count(*) FROM ev)::int AS inserted,
    ${withKeys ? "(SELECT coalesce(json_agg(i.id), '[]') FROM input i WHERE NOT EXISTS (SELECT 1 FROM ev WHERE ev.id = i.id))" : "'[]'::json"} AS skipped,
    (SELECT count(*) FROM woken)::int AS woken,
    ${leased} AS leased`;
  if (!handOff) {
    return `${input}, fanned_out AS (
    INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
    SELECT ${deliveryId}, p.store_id, p.event_id, p.webhook_id, p.type, now() + make_interval(secs => $2::double precision / 1000), p.ordered
    FROM (SELECT ev.id AS event_id, ev.store_id, ev.type, w.id AS webhook_id, w.ordered
          FROM (SELECT id, store_id, type, ${envelopeForFilters('body')} AS envelope FROM ev OFFSET 0) ev
          JOIN webhooks w ON w.store_id = ev.store_id AND w.is_active AND ev.type = ANY (w.events)
            AND ${passesFilter('w', 'ev.envelope')}) p
    RETURNING event_id
  ), woken AS (
    SELECT pg_notify($3, '')::text FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery
  )${answer("'[]'::json")}`;
  }
  return `${input}, targets AS (
    SELECT ev.id AS event_id, ev.store_id, ev.type, w.id AS webhook_id, w.ordered, w.rate_limit_per_second IS NOT NULL AS rate_limited,
      row_number() OVER (PARTITION BY w.id ORDER BY ev.id) AS k
    FROM (SELECT id, store_id, type, ${envelopeForFilters('body')} AS envelope FROM ev OFFSET 0) ev
    JOIN webhooks w ON w.store_id = ev.store_id AND w.is_active AND ev.type = ANY (w.events)
      AND ${passesFilter('w', 'ev.envelope')}
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
    SELECT ${deliveryId}, p.store_id, p.event_id, p.webhook_id, p.type,
      now() + make_interval(secs => CASE WHEN p.leased THEN 0 ELSE $2::double precision END / 1000),
      CASE WHEN p.leased THEN $9 END, CASE WHEN p.leased THEN now() + make_interval(secs => $8::double precision / 1000) END,
      p.leased::int, p.leased::int, p.ordered
    FROM placed p
    RETURNING id, event_id, webhook_id, store_id, lease_token IS NOT NULL AS leased
  ), woken AS (
    SELECT pg_notify($3, CASE WHEN bool_and(f.webhook_id = ANY ($5::text[]) OR f.store_id = ANY ($10::text[])) THEN $9 ELSE '' END)::text
    FROM fanned_out f WHERE NOT f.leased HAVING count(*) > 0
  )${answer(`(SELECT coalesce(json_agg(json_build_array(f.id, f.event_id, f.webhook_id, w.url, w.secret_encrypted,
       CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END, ${headersRevision('w')}, w.retry_schedule)), '[]')
     FROM fanned_out f JOIN webhooks w ON w.id = f.webhook_id AND w.store_id = f.store_id WHERE f.leased)`)}`;
}

export const PUBLISH_MANY = statement('publish-many', publishManyStatement({ withKeys: false, handOff: false }));
export const PUBLISH_MANY_HAND_OFF = statement('publish-many-hand-off', publishManyStatement({ withKeys: false, handOff: true }));
export const PUBLISH_MANY_KEYS = statement('publish-many-keys', publishManyStatement({ withKeys: true, handOff: false }));
export const PUBLISH_MANY_KEYS_HAND_OFF = statement('publish-many-keys-hand-off', publishManyStatement({ withKeys: true, handOff: true }));

/** $1 event, $2 store, $3 type, $4 body, $5 time, $6 traceparent: an event with no fan-out (the endpoint test writes its one delivery itself). */
export const INSERT_EVENT = statement(
  'insert-event',
  `INSERT INTO events (id, store_id, type, body, created_at, traceparent) VALUES ($1, $2, $3, $4, $5, $6)`,
);

/**
 * $1 store, $2 key, $3 window in hours: an Idempotency-Key older than the window is free again, its
 * old holder gives it up. So is one whose event retention removed.
 */
export const EXPIRE_IDEMPOTENCY_KEY = statement(
  'expire-idempotency-key',
  `
  DELETE FROM idempotency_keys k
  WHERE k.store_id = $1 AND k.key = $2
    AND (k.created_at < now() - make_interval(hours => $3)
      OR NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id AND e.store_id = k.store_id))`,
);

/** {@link EXPIRE_IDEMPOTENCY_KEY} for the keys `$2` of a batch, in one statement. */
export const EXPIRE_IDEMPOTENCY_KEYS_OF_BATCH = statement(
  'expire-idempotency-keys-of-batch',
  `
  DELETE FROM idempotency_keys k
  WHERE k.store_id = $1 AND k.key = ANY ($2::text[])
    AND (k.created_at < now() - make_interval(hours => $3)
      OR NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id AND e.store_id = k.store_id))`,
);

/** $1 store, $2 keys: the events holding them, with their fan-out counts. */
export const EVENTS_BY_IDEMPOTENCY_KEYS = statement(
  'events-by-idempotency-keys',
  `
  SELECT k.key, e.id, e.type, e.body, e.created_at AS "createdAt",
    (SELECT count(*)::int FROM deliveries d WHERE ${deliveriesOfEvent('d', 'e')} AND d.store_id = e.store_id) AS deliveries
  FROM idempotency_keys k JOIN events e ON e.id = k.event_id AND e.store_id = k.store_id
  WHERE k.store_id = $1 AND k.key = ANY ($2::text[])`,
);

/** $1 id, $2 store: one event. */
export const FIND_EVENT = statement(
  'find-event',
  `SELECT id, type, body, created_at AS "createdAt" FROM events WHERE id = $1 AND store_id = $2`,
);

/** $1 window in hours: forgets idempotency keys past it (a safety valve for the table's size). */
export const EXPIRE_IDEMPOTENCY_KEYS = statement(
  'expire-idempotency-keys',
  `DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`,
);
