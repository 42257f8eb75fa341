import { statement } from '../../database/sql';
import { envelopeForFilters, passesFilter } from '../../webhooks/content-filter';
import { headersRevision } from '../../webhooks/webhook.repository';

/**
 * Where a claim's steps find a row's store: in its own column on one server; on a Citus cluster,
 * the one store `$8` a statement claims, named in every step so that each runs on its shard.
 */
interface ClaimScope {
  /** The store of the row `alias` (or of the CTE's own rows, without one). */
  store: (alias?: string) => string;
  /** A condition on `alias`'s store to put first, or nothing. */
  keyed: (alias: string) => string;
  /** The parameter holding the error of an interrupted attempt. */
  interruptedError: string;
}

const ONE_SERVER: ClaimScope = {
  store: (alias) => (alias ? `${alias}.store_id` : 'store_id'),
  keyed: () => '',
  interruptedError: '$13',
};

/** The claim of the store `$8` alone, on a Citus cluster (citus-claim.sql.ts), `$12` the interrupted error. */
export const ONE_STORE: ClaimScope = {
  store: () => '$8',
  keyed: (alias) => `${alias}.store_id = $8 AND `,
  interruptedError: '$12::text',
};

/** The columns a delivery keeps in the log, written once when it ends. */
export const DELIVERY_LOG_COLUMNS =
  'id, store_id, event_id, webhook_id, event_type, status, attempt_count, last_status_code, last_error, created_at, updated_at, ordered, restarted_at';

/**
 * The log rows of the queue's rows `ended` (a CTE answering them whole), ended with `status` and
 * the last error `lastError` (SQL).
 */
export function logEnded(ended: string, status: string, lastError: string): string {
  return `INSERT INTO delivery_log (${DELIVERY_LOG_COLUMNS})
    SELECT id, store_id, event_id, webhook_id, event_type, ${status}, attempt_count, last_status_code, ${lastError}, created_at, now(),
      ordered, restarted_at
    FROM ${ended}`;
}

/**
 * Not held by a worker, or held by one that died: its lease ran out. A claim leaves the due time
 * as it is (the lease is a column of its own, so that the claim's update is HOT): the due indexes
 * hold leased deliveries too, the few in flight, which this skips.
 */
export const UNLEASED = (alias: string): string => `(${alias}.lease_until IS NULL OR ${alias}.lease_until <= now())`;

/** What a claim reads of each row it locks (`locked`). */
export const LOCKED_COLUMNS =
  'd.id, d.store_id, d.webhook_id, d.event_id, d.ordered, d.next_attempt_at, d.lease_token, d.lease_until, d.attempt_count, d.cycle_attempts';

/**
 * The steps of a claim after its rows are locked (`locked`: the due rows with their store, endpoint,
 * event, lease and counts): ordered deliveries held back, endpoints' slots and rate limits applied,
 * the rest leased and answered (`sent`) with what sending needs.
 */
export function claimSteps({ store, keyed, interruptedError }: ClaimScope): string {
  return `  ), gated AS (
    SELECT l.*, (NOT l.ordered OR NOT EXISTS (
      SELECT 1 FROM delivery_queue p
      WHERE ${keyed('p')}p.webhook_id = l.webhook_id AND p.ordered AND p.event_id < l.event_id
    )) AS free
    FROM locked l
  ), held AS (
    UPDATE delivery_queue d SET next_attempt_at = NULL, updated_at = now()
    FROM gated g WHERE ${keyed('d')}d.id = g.id AND NOT g.free AND g.lease_token IS NULL
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
      SELECT w.rate_limit_per_second AS per_second FROM webhooks w WHERE w.id = f.webhook_id AND w.store_id = ${store('f')} OFFSET 0
    ) w
    WHERE w.per_second IS NOT NULL
  ), windows AS (
    INSERT INTO endpoint_rate_windows AS r (webhook_id, store_id, window_start, requests)
    -- In endpoint order, so that two claims lock the rows of several endpoints in the same order.
    SELECT webhook_id, ${store()}, date_trunc('second', now()), wanted FROM limited ORDER BY webhook_id
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
    WHERE ${keyed('d')}d.id = p.id AND p.put_off AND p.lease_token IS NULL
    RETURNING d.next_attempt_at
  ), interrupted AS (
    INSERT INTO delivery_attempts (delivery_id, store_id, number, trigger, started_at, duration_ms, status_code, error, response_body)
    SELECT c.id, ${store('c')}, c.attempt_count,
      CASE WHEN c.cycle_attempts = 1 AND c.attempt_count > 1 THEN 'manual' ELSE 'scheduled' END,
      c.lease_until - make_interval(secs => $5::double precision / 1000), 0, NULL, ${interruptedError}, NULL
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
    WHERE ${keyed('d')}d.id = c.id
    RETURNING d.id, d.store_id, d.event_id, d.webhook_id, d.event_type, d.attempt_count, d.cycle_attempts, d.ordered
  ), sent AS (
    SELECT d.id, d.event_id AS "eventId", d.webhook_id AS "webhookId", d.store_id AS "storeId",
      d.attempt_count AS "attemptNumber", d.cycle_attempts AS "cycleAttempt", d.event_type AS "eventType",
      e.body, e.traceparent,
      w.url, w.secret_encrypted AS "secretSealed", w.is_active AS "webhookActive",
      CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END AS "previousSecretSealed",
      ${headersRevision('w')} AS "headersRevision", w.retry_schedule AS "retrySchedule", d.ordered
    -- An event's body and trace are read and answered once, on one of its deliveries (\`carries\`):
    -- DeliveryRepository gives them to its other deliveries, not each endpoint's row its own copy.
    FROM (SELECT c.*, row_number() OVER (PARTITION BY c.event_id) = 1 AS carries FROM claimed c) d
    -- By its key, one row each, whatever the statistics said when the plan was made (above).
    LEFT JOIN LATERAL (
      SELECT e.body, e.traceparent FROM events e WHERE d.carries AND e.id = d.event_id AND e.store_id = ${store('d')} OFFSET 0
    ) e ON true
    CROSS JOIN LATERAL (SELECT * FROM webhooks w WHERE w.id = d.webhook_id AND w.store_id = ${store('d')} OFFSET 0) w
  )`;
}

/**
 * The claim on one server: see DeliveryRepository.claimDue. $1 endpoints without free slots, $2 the
 * limit, $3/$4 endpoints' free slots and the default, $5 the lease in ms, $6 the lease token, $7 how
 * early a delivery may be taken, $8 the store after which turns start, $9 the most stores, $10 stores
 * without free slots, $11/$12 stores' free slots and the default, $13 the interrupted attempt's error.
 */
export const CLAIM = statement(
  'claim',
  `
  WITH RECURSIVE walk(store_id, n, wrapped) AS (
    -- From the store $8 on, the next store with due work at each step (one probe of the
    -- per-store due index, whatever its backlog), around once at most: NULL marks the wrap.
    SELECT $8::text, 0, false
    UNION ALL
    SELECT nx.store_id, w.n + 1, w.wrapped OR nx.store_id IS NULL
    FROM walk w CROSS JOIN LATERAL (
      -- OFFSET 0: looked up once per step, not once for each place nx.store_id is read.
      SELECT (SELECT d.store_id FROM delivery_queue d
              WHERE d.store_id > coalesce(w.store_id, '')
                AND d.next_attempt_at <= now() + make_interval(secs => $7::double precision / 1000)
                AND ${UNLEASED('d')}
              ORDER BY d.store_id LIMIT 1) AS store_id
      OFFSET 0
    ) nx
    WHERE w.n < $9 AND NOT (w.wrapped AND (nx.store_id IS NULL OR nx.store_id > $8))
  ), turns AS (
    -- $2 split evenly among the stores with free slots (the first ones get the remainder).
    SELECT w.n, w.store_id, coalesce(($11::jsonb ->> w.store_id)::int, $12) AS available,
      ($2 / count(*) OVER () + CASE WHEN row_number() OVER (ORDER BY w.n) <= $2 % count(*) OVER () THEN 1 ELSE 0 END)::int AS share
    FROM walk w
    WHERE w.store_id IS NOT NULL AND w.n > 0 AND NOT (w.store_id = ANY ($10::text[]))
  ), locked AS (
    SELECT t.n AS turn, l.* FROM turns t CROSS JOIN LATERAL (
      SELECT ${LOCKED_COLUMNS}
      FROM delivery_queue d
      WHERE d.store_id = t.store_id
        AND d.next_attempt_at <= now() + make_interval(secs => $7::double precision / 1000)
        AND ${UNLEASED('d')} AND NOT (d.webhook_id = ANY ($1::text[]))
      -- In the order of the per-store index, which the due index of all stores cannot give: a
      -- generic plan otherwise could read that index, every store's rows, for each store.
      ORDER BY d.store_id, d.next_attempt_at
      LIMIT least(t.available, t.share)
      FOR UPDATE SKIP LOCKED
    ) l
${claimSteps(ONE_SERVER)}
  -- One row even when nothing was claimed: it carries what more may be due (the turns ended
  -- before every store had one; stores had as many due as they were given), where the next
  -- claim's turns start, and when put-off deliveries come due.
  -- The arrays on one row only: the driver parses arrays in JavaScript, and 500 copies of
  -- 32 store ids are 16,000 strings a claim.
  SELECT c.*, m."turnsCut", m."lastStore",
    CASE WHEN c.id IS NOT DISTINCT FROM (SELECT min(id) FROM sent) THEN m."crowdedStores" END AS "crowdedStores",
    CASE WHEN c.id IS NOT DISTINCT FROM (SELECT min(id) FROM sent) THEN m."deferredDueInMs" END AS "deferredDueInMs"
  FROM (SELECT coalesce((SELECT max(n) FROM walk) >= $9, false) AS "turnsCut",
      (SELECT coalesce(array_agg(t.store_id), '{}') FROM turns t
        JOIN (SELECT turn, count(*) AS n FROM locked GROUP BY turn) l ON l.turn = t.n
        WHERE l.n >= least(t.available, t.share)) AS "crowdedStores",
      (SELECT store_id FROM walk WHERE store_id IS NOT NULL AND n > 0 ORDER BY n DESC LIMIT 1) AS "lastStore",
      (SELECT array_agg(DISTINCT extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000) FROM deferred) AS "deferredDueInMs"
    ) m
  LEFT JOIN sent c ON true`,
);

/** The columns of an outcome in {@link DeliveryRepository.recordOutcomes}'s JSON parameter. */
const OUTCOME_COLUMNS = `id text, token text, status text, delay_ms double precision,
  last_status_code int, last_error text, record_attempt boolean, number int, trigger text, started_at timestamptz,
  duration_ms int, status_code int, error text, response_body text`;

/** `, store_id, stamp, number_now` of `, d.store_id, u.stamp, d.attempt_count AS number_now`: the names the `extra` columns take. */
function columnNames(extra: string): string {
  return extra.replace(/\b[du]\.\w+ AS /g, '').replace(/\b[du]\./g, '');
}

/** An attempt row's columns, in delivery_attempts's order from `delivery_id`, as named in `u`. */
const ATTEMPT_COLUMNS = 'number, trigger, started_at, duration_ms, status_code, error, response_body';
const INSERT_ATTEMPTS = `INSERT INTO delivery_attempts (delivery_id, store_id, ${ATTEMPT_COLUMNS})`;
/** {@link ATTEMPT_COLUMNS} read from the outcomes' rows. */
const OUTCOME_ATTEMPT_COLUMNS = ATTEMPT_COLUMNS.replace(/(\w+)/g, 'u.$1');

/**
 * What `retried` and `ended` answer on one server beside `extra`: the attempt row of each
 * delivery they changed, and its attempt count then, so that the attempt is written from them.
 */
const OWN_ATTEMPT = `, d.attempt_count AS number_now, u.record_attempt, ${OUTCOME_ATTEMPT_COLUMNS}`;

/**
 * The attempt rows of a batch, each with its delivery's store: in the queue, or already in the log
 * when another worker ended it after this one's lease ran out (the attempt was really made, and
 * replaces the "interrupted" row put in its place). One server looks the log up only for a
 * delivery the queue does not hold; on a Citus cluster both are joined (a delivery is in one).
 */
function attemptRows(cluster: boolean): string {
  const columns = `u.id, p.store_id, ${OUTCOME_ATTEMPT_COLUMNS}`;
  if (cluster) {
    return `SELECT ${columns} FROM u JOIN delivery_queue p ON p.id = u.id WHERE u.record_attempt
    UNION ALL
    SELECT ${columns} FROM u JOIN delivery_log p ON p.id = u.id WHERE u.record_attempt`;
  }
  return `SELECT ${columns}
    FROM u CROSS JOIN LATERAL (
      -- OFFSET 0: worked out once per row, not again for each place store_id is read.
      SELECT coalesce((SELECT d.store_id FROM delivery_queue d WHERE d.id = u.id), (SELECT l.store_id FROM delivery_log l WHERE l.id = u.id)) AS store_id
      OFFSET 0
    ) AS p
    WHERE u.record_attempt AND p.store_id IS NOT NULL`;
}

/**
 * A result written after its lease ran out (the database was away) replaces the "interrupted"
 * row another worker put in its place: the log keeps what really happened.
 */
function replacingInterrupted(interruptedParam: string): string {
  return `ON CONFLICT (delivery_id, number, store_id) DO UPDATE SET started_at = excluded.started_at,
      duration_ms = excluded.duration_ms, status_code = excluded.status_code, error = excluded.error,
      response_body = excluded.response_body
    WHERE delivery_attempts.error = ${interruptedParam}`;
}

/**
 * One server's attempt rows, after the decisions. A delivery this batch changed, still at the
 * attempt the row records, has no other row for it: only a claim taking the delivery over writes
 * one (the interrupted attempt), and that claim moved its count on. Its row is a plain insert,
 * its store read from the change. The rest (a lease that ran out, a delivery another worker
 * ended) are looked up and may replace an interrupted row; when there are none, as nearly always,
 * the once-evaluated counts skip their lookups.
 */
function oneServerAttempts(interruptedParam: string): string {
  return `own_attempts AS (
    ${INSERT_ATTEMPTS}
    SELECT id, store_id, ${ATTEMPT_COLUMNS} FROM updated WHERE record_attempt AND number_now = number
  ), late_attempts AS (
    ${INSERT_ATTEMPTS}
    ${attemptRows(false)}
      AND (SELECT count(*) FROM updated WHERE record_attempt AND number_now = number) < (SELECT count(*) FROM u WHERE record_attempt)
      AND NOT EXISTS (SELECT 1 FROM updated own WHERE own.id = u.id AND own.record_attempt AND own.number_now = u.number)
    ${replacingInterrupted(interruptedParam)}
  )`;
}

/**
 * The attempt rows and the decisions (see recordOutcomes); `updated` answers `extra` columns too.
 * `interruptedParam` is the parameter holding the error of an interrupted attempt, `tokenParam` the
 * lease token of every outcome whose row names none (a worker's batch has one token).
 */
function recordOutcomesCtes(columns: string, extra: string, cluster: boolean, interruptedParam: string, tokenParam: string): string {
  // On a Citus cluster (docs/scaling.md, "Citus"): the times are worked out before the updates
  // (Citus sends no now() inside a CASE to the shards), the deliveries are joined rather than
  // looked up by a lateral subquery, and the ordered release takes each endpoint's next by DISTINCT ON.
  const returned = cluster ? extra : `${extra}${OWN_ATTEMPT}`;
  return `WITH u AS (
    SELECT *${cluster ? ', now() + make_interval(secs => greatest(u.delay_ms, 0) / 1000) AS due, now() AS at' : ''}
    FROM json_to_recordset($1::json) AS u(${columns})
  ), ${
    cluster
      ? `attempts AS (
    ${INSERT_ATTEMPTS}
    ${attemptRows(true)}
    ${replacingInterrupted(interruptedParam)}
  ), `
      : ''
  }retried AS (
    -- A retry stays in the queue, due again later.
    UPDATE delivery_queue d
    SET next_attempt_at = ${cluster ? 'u.due' : 'now() + make_interval(secs => greatest(u.delay_ms, 0) / 1000)'},
        lease_token = NULL, lease_until = NULL, last_status_code = u.last_status_code, last_error = u.last_error, updated_at = now()
    FROM u
    WHERE d.id = u.id AND d.lease_token = coalesce(u.token, ${tokenParam}) AND u.status = 'pending'
    RETURNING d.id, u.status, d.next_attempt_at, d.ordered, d.webhook_id AS endpoint${returned}
  ), ended AS (
    -- A delivery that ended leaves the queue for the log, written once.
    DELETE FROM delivery_queue d
    USING u
    WHERE d.id = u.id AND d.lease_token = coalesce(u.token, ${tokenParam}) AND u.status <> 'pending'
    RETURNING d.id, u.status, d.ordered, d.webhook_id AS endpoint, d.store_id AS log_store, d.event_id AS log_event,
      d.event_type AS log_type, d.attempt_count AS log_attempts, u.last_status_code AS log_code, u.last_error AS log_error,
      d.created_at AS log_created, d.restarted_at AS log_restarted${returned}
  ), logged AS (
    INSERT INTO delivery_log (${DELIVERY_LOG_COLUMNS})
    SELECT id, log_store, log_event, endpoint, log_type, status, log_attempts, log_code, log_error, log_created, now(), ordered, log_restarted
    FROM ended
  ), updated AS (
    SELECT id, status, next_attempt_at, ordered, endpoint${columnNames(returned)} FROM retried
    UNION ALL
    SELECT id, status, NULL::timestamptz, ordered, endpoint${columnNames(returned)} FROM ended
  ), ${cluster ? '' : `${oneServerAttempts(interruptedParam)}, `}released AS (
    -- An ordered delivery that ended lets the next of its endpoint go (claimDue held it). Not
    -- filtered on being held: a claim holding it right now is waited for, then overridden.
    -- The rows are looked up by their ids, worked out first.
    UPDATE delivery_queue n
    SET next_attempt_at = coalesce(n.next_attempt_at, ${cluster ? 'c.at' : 'now()'}), updated_at = now()
    ${cluster ? 'FROM (SELECT now() AS at) c' : ''}
    WHERE n.id = ANY (ARRAY(${
      cluster
        ? `
      SELECT DISTINCT ON (p.store_id, p.webhook_id) p.id FROM delivery_queue p
      JOIN (SELECT DISTINCT endpoint, store_id FROM updated WHERE ordered AND status <> 'pending') ended
        ON p.store_id = ended.store_id AND p.webhook_id = ended.endpoint
      WHERE p.ordered AND NOT (p.id = ANY ($2::text[]))
      ORDER BY p.store_id, p.webhook_id, p.event_id`
        : `
      SELECT next.id FROM (SELECT DISTINCT endpoint FROM updated WHERE ordered AND status <> 'pending') ended
      CROSS JOIN LATERAL (
        SELECT p.id FROM delivery_queue p
        WHERE p.webhook_id = ended.endpoint AND p.ordered AND NOT (p.id = ANY ($2::text[]))
        ORDER BY p.event_id LIMIT 1
      ) next`
    }
    ))
    RETURNING n.id
  )`;
}

const RETRIES = `SELECT 'retry' AS kind, id, extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000 AS "dueInMs"
  FROM updated WHERE status = 'pending'`;

/**
 * Outcomes without a failure to count (successes, retries, ends without an attempt). A stamped
 * success clears its endpoint's failing count if one runs, and writes nothing otherwise: with
 * thousands of endpoints each one's first success in an interval is stamped, and nearly every
 * batch would otherwise take the health statement below, which costs more per delivery.
 */
const record = (
  cluster: boolean,
): string => `${recordOutcomesCtes(`${OUTCOME_COLUMNS}, stamp boolean`, ', d.store_id, u.stamp', cluster, '$3', '$4')}, cleared AS (
    UPDATE endpoint_health h SET last_success_at = now(), failing_since = NULL, failures = 0
    FROM (SELECT DISTINCT endpoint, store_id FROM updated WHERE stamp) c
    WHERE h.webhook_id = c.endpoint AND h.store_id = c.store_id AND (h.failures > 0 OR h.failing_since IS NOT NULL)
  )
  ${RETRIES}`;
/** $1 the outcomes (JSON), $2 their ids, $3 the error of an interrupted attempt, $4 the lease token of rows without one. */
export const RECORD = statement('record', record(false));
export const RECORD_ON_CLUSTER = statement('record-on-cluster', record(true));

/**
 * {@link RECORD}, and: a delivery that ends `failed` after an attempt counts against its
 * endpoint's health (a stamped success clears it); its webhook.delivery_failed event is written
 * with its deliveries (to the endpoints whose content filter it matches) when an active endpoint
 * of the store subscribes; answers the endpoints whose count crossed `$3` failures over `$4` ms (`$5` the interrupted error, `$6`
 * the NOTIFY channel).
 * All conditional on the decision being written.
 */
const recordWithHealth = (cluster: boolean): string => `${recordOutcomesCtes(
  `${OUTCOME_COLUMNS}, counts boolean, stamp boolean, notice_id text, notice_body text, notice_at timestamptz`,
  `, d.webhook_id, d.store_id, u.counts, u.stamp, u.notice_id, u.notice_body, u.notice_at`,
  cluster,
  '$5',
  '$7',
)}, health_changes AS (
    SELECT webhook_id, store_id, bool_or(stamp) AS stamped, count(*) FILTER (WHERE counts)::int AS failed
    FROM updated WHERE counts OR stamp GROUP BY webhook_id, store_id
  ), health AS (
    -- A failure starts the failing time if none runs; a stamped success of the same batch clears
    -- what came before (the batch's failures start the count again).
    INSERT INTO endpoint_health AS h (webhook_id, store_id, last_success_at, failing_since, failures)
    SELECT webhook_id, store_id, CASE WHEN stamped THEN now() END, now(), failed FROM health_changes WHERE failed > 0
    ON CONFLICT (webhook_id, store_id) DO UPDATE SET
      last_success_at = coalesce(excluded.last_success_at, h.last_success_at),
      failing_since = CASE WHEN excluded.last_success_at IS NOT NULL THEN excluded.failing_since
        ELSE coalesce(h.failing_since, excluded.failing_since) END,
      failures = CASE WHEN excluded.last_success_at IS NOT NULL THEN excluded.failures ELSE h.failures + excluded.failures END
    RETURNING h.webhook_id, h.failing_since, h.failures
  ), cleared AS (
    -- A stamped success with no failure beside it clears a failing count if one runs, and writes
    -- nothing for an endpoint that has none: with thousands of endpoints, each one's first success
    -- in an interval is stamped, and an insert for each was most of what those batches cost.
    UPDATE endpoint_health h SET last_success_at = now(), failing_since = NULL, failures = 0
    FROM health_changes c
    WHERE c.failed = 0 AND h.webhook_id = c.webhook_id AND h.store_id = c.store_id AND (h.failures > 0 OR h.failing_since IS NOT NULL)
  ), notices AS (
    INSERT INTO events (id, store_id, type, body, created_at)
    SELECT notice_id, store_id, 'webhook.delivery_failed', notice_body, notice_at FROM updated
    WHERE status = 'failed' AND notice_id IS NOT NULL
      AND ${
        cluster
          ? "store_id IN (SELECT w.store_id FROM webhooks w WHERE w.is_active AND 'webhook.delivery_failed' = ANY (w.events))"
          : "EXISTS (SELECT 1 FROM webhooks w WHERE w.store_id = updated.store_id AND w.is_active AND 'webhook.delivery_failed' = ANY (w.events))"
      }
    RETURNING id, store_id, body
  ), notice_deliveries AS (
    INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
    SELECT 'del_' || substr(n.id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), n.store_id, n.id, w.id,
      'webhook.delivery_failed', now(), w.ordered
    FROM (SELECT id, store_id, ${envelopeForFilters('body')} AS envelope FROM notices OFFSET 0) n
    JOIN webhooks w ON w.store_id = n.store_id AND w.is_active AND 'webhook.delivery_failed' = ANY (w.events)
      AND ${passesFilter('w', 'n.envelope')}
    RETURNING 1
  ), woken AS (
    SELECT pg_notify($6, '')::text FROM (SELECT 1 FROM notice_deliveries LIMIT 1) AS any_delivery
  )
  ${RETRIES}
  UNION ALL
  SELECT 'failing', webhook_id, NULL FROM health
  WHERE $3::int IS NOT NULL AND failures >= $3 AND failing_since <= now() - make_interval(secs => $4::double precision / 1000)
  UNION ALL
  SELECT 'woken', NULL, NULL FROM woken`;
/** As {@link RECORD}, with $3 and $4 the disabling thresholds, $5 the interrupted error, $6 the NOTIFY channel, $7 the lease token. */
export const RECORD_WITH_HEALTH = statement('record-health', recordWithHealth(false));
export const RECORD_WITH_HEALTH_ON_CLUSTER = statement('record-health-on-cluster', recordWithHealth(true));

/** $1 endpoint, $2 the error: ends an inactive endpoint's waiting deliveries (those no worker holds). */
export const FAIL_WAITING = statement(
  'fail-waiting',
  `
  WITH ended AS (
    DELETE FROM delivery_queue WHERE webhook_id = $1 AND lease_token IS NULL RETURNING *
  )
  ${logEnded('ended', "'failed'", '$2')}`,
);

/** $1 endpoint: forgets its failing count. */
export const CLEAR_HEALTH = statement('clear-health', `DELETE FROM endpoint_health WHERE webhook_id = $1`);

/** $1 id, $2 store, $3 event, $4 endpoint, $5 type, $6 lease token, $7 lease in ms: a delivery leased to its writer. */
export const CREATE_LEASED = statement(
  'create-leased',
  `
  INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, attempt_count, cycle_attempts, lease_token, lease_until, next_attempt_at)
  VALUES ($1, $2, $3, $4, $5, 1, 1, $6, now() + make_interval(secs => $7::double precision / 1000), now())`,
);

/** $1 ids, $2 lease token: claimed deliveries given back unattempted, due at once. */
export const RELEASE_LEASES = statement(
  'release-leases',
  `
  UPDATE delivery_queue SET next_attempt_at = now(), lease_token = NULL, lease_until = NULL,
    attempt_count = attempt_count - 1, cycle_attempts = cycle_attempts - 1, updated_at = now()
  WHERE id = ANY($1::text[]) AND lease_token = $2`,
);

/**
 * The first waiting delivery of each ordered endpoint, released when it is held with nothing ahead
 * of it: one index entry per ordered endpoint with pending deliveries (a skip scan).
 */
export const RELEASE_STALLED = statement(
  'release-stalled',
  `
  WITH RECURSIVE heads AS (
    (SELECT webhook_id, id, next_attempt_at FROM delivery_queue WHERE ordered ORDER BY webhook_id, event_id LIMIT 1)
    UNION ALL
    SELECT n.webhook_id, n.id, n.next_attempt_at FROM heads h CROSS JOIN LATERAL (
      SELECT webhook_id, id, next_attempt_at FROM delivery_queue
      WHERE ordered AND webhook_id > h.webhook_id ORDER BY webhook_id, event_id LIMIT 1
    ) n
  ), released AS (
    UPDATE delivery_queue d SET next_attempt_at = now(), updated_at = now()
    FROM heads h WHERE d.id = h.id AND h.next_attempt_at IS NULL AND d.next_attempt_at IS NULL
    RETURNING 1
  )
  SELECT count(*)::int AS released FROM released`,
);

/** {@link RELEASE_STALLED} on a Citus cluster: no skip scan across shards, each shard answers its endpoints' first. */
export const RELEASE_STALLED_ON_CLUSTER = statement(
  'release-stalled-on-cluster',
  `
  WITH released AS (
    UPDATE delivery_queue d SET next_attempt_at = now(), updated_at = now()
    FROM (SELECT DISTINCT ON (store_id, webhook_id) store_id, id, next_attempt_at FROM delivery_queue
          WHERE ordered ORDER BY store_id, webhook_id, event_id) h
    WHERE d.store_id = h.store_id AND d.id = h.id AND h.next_attempt_at IS NULL AND d.next_attempt_at IS NULL
    RETURNING 1
  )
  SELECT count(*)::int AS released FROM released`,
);

/** The due time of `storeId`'s first pending delivery that no worker holds (a probe of the per-store due index). */
function firstDue(storeId: string): string {
  return `(SELECT q.next_attempt_at FROM delivery_queue q
      WHERE q.store_id = ${storeId} AND q.next_attempt_at IS NOT NULL AND q.lease_token IS NULL
      ORDER BY q.next_attempt_at LIMIT 1)`;
}

/**
 * When the next pending delivery that no worker holds is due: each store's first in the per-store
 * due index, one probe per store with pending deliveries (a skip scan). The queue has no index of
 * every store's due times (HotQueue migration). The walk stops at the first store with work due
 * already, whose time answers as well as the earliest would (due now either way): under load that
 * is the first store, where walking every store cost tens of milliseconds at a thousand stores.
 */
export const NEXT_DUE = statement(
  'next-due',
  `
  WITH RECURSIVE stores(store_id, at) AS (
    SELECT s.store_id, ${firstDue('s.store_id')}
    FROM (SELECT min(store_id) AS store_id FROM delivery_queue) s
    UNION ALL
    SELECT n.store_id, ${firstDue('n.store_id')}
    FROM stores s CROSS JOIN LATERAL (SELECT min(q.store_id) AS store_id FROM delivery_queue q WHERE q.store_id > s.store_id) n
    WHERE s.store_id IS NOT NULL AND (s.at IS NULL OR s.at > now())
  )
  SELECT min(at) AS at FROM stores`,
);

/** {@link NEXT_DUE} on a Citus cluster, where a recursive query cannot run across shards: each shard reads its own. */
export const NEXT_DUE_ON_CLUSTER = statement(
  'next-due-on-cluster',
  `SELECT min(next_attempt_at) AS at FROM delivery_queue WHERE lease_token IS NULL`,
);
