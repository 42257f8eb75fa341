import { Inject, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Pool } from 'pg';
import { newIdAtTimeOf } from '../../common/ids';
import { DISPATCH_POOL } from './dispatch-pool';
import { DELIVERIES_CHANNEL } from './deliveries-channel';
import type { AttemptTrigger } from './delivery-attempt.entity';
import type { DeliveryStatus } from './delivery.entity';
import type { OperationalEvent } from '../../catalogue/operational-events';
import { headersRevision } from '../../webhooks/webhook.repository';
import { DatabaseEngine } from '../../database/database-engine';
import { CLAIM_ONE_STORE, DUE_STORES } from './citus-claim.sql';
import { clusterTurns } from './cluster-turns';
import { envelopeForFilters, passesFilter } from '../../webhooks/content-filter';

/** A claimed delivery with everything needed to send it (one round trip). */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  webhookId: string;
  /** The store the delivery belongs to (its slots are counted per store). */
  storeId: string;
  /** The type of the event carried (a failed delivery of an operational type tells nobody). */
  eventType: string;
  /** Number of this attempt over the delivery's life (the attempt row's `number`). */
  attemptNumber: number;
  /** Number of this attempt in the current cycle (for the retry schedule). */
  cycleAttempt: number;
  body: string;
  /** The W3C traceparent its event was published with, if tracing was on then. */
  traceparent?: string | null;
  url: string;
  secretSealed: string;
  /** The secret before a rotation, while its overlap lasts; null otherwise. */
  previousSecretSealed: string | null;
  /** The revision of the endpoint's own headers, null when it has none (HeaderCache reads them). */
  headersRevision: string | null;
  /** The endpoint's own schedule, or null for the deployment's. */
  retrySchedule: number[] | null;
  webhookActive: boolean;
  /** Created for an ordered endpoint: its end releases the endpoint's next delivery. */
  ordered: boolean;
}

/** What one claim took, and what it saw. */
export interface ClaimBatch {
  deliveries: ClaimedDelivery[];
  /** The claim's turns ended before every store with due work had one. */
  turnsCut: boolean;
  /**
   * Stores that had at least as many due as the claim gave them (their share of it, or their free
   * slots): more of theirs may be due, for a claim once they have free slots again.
   */
  crowdedStores: string[];
  /** The last store that had a turn, where the next claim's turns start; null when no store had one. */
  lastStore: string | null;
  /** When the deliveries a rate limit put off come due (this process's clock), one entry per second. */
  deferredDueAt: number[];
}

/** A claimed delivery as the claim statement answers it, with the claim's figures on every row. */
type ClaimRow = ClaimedDelivery & {
  turnsCut: boolean;
  /** On one row only (the others have null). */
  crowdedStores: string[] | null;
  lastStore: string | null;
  deferredDueInMs: Array<number | string> | null;
};

/** The result of one attempt and the decision taken on it, written together. */
export interface AttemptOutcome {
  deliveryId: string;
  leaseToken: string;
  /** null when no HTTP attempt was made (the endpoint turned out to be inactive). */
  attempt: AttemptRow | null;
  status: DeliveryStatus;
  /** For `pending`: milliseconds from `decidedAt` to the next attempt. */
  retryDelayMs: number;
  decidedAt: number;
  lastStatusCode: number | null;
  lastError: string | null;
  /** For `failed` after an attempt: the webhook.delivery_failed event, written if an endpoint of the store subscribes. */
  failureEvent?: OperationalEvent;
  /** For `succeeded`: write the endpoint's last success (EndpointHealth says when it is worth it). */
  stampSuccess?: boolean;
  /** A person's test of the endpoint: its failure does not count against the endpoint's health. */
  probe?: boolean;
  /** A failure that is not the endpoint's (its secret does not decrypt here): it does not count against its health either. */
  sparesEndpoint?: boolean;
}

/** When an endpoint that keeps failing is disabled (ENDPOINT_DISABLE_AFTER_MS, ENDPOINT_DISABLE_MIN_FAILURES). */
export interface DisableThresholds {
  /** No success written for this long (the threshold plus EndpointHealth's stamp interval: never early). */
  afterMs: number;
  minFailures: number;
}

/** What a write of outcomes answers: the retries it scheduled, and the endpoints that crossed the thresholds. */
export interface RecordedOutcomes {
  scheduled: ScheduledRetry[];
  /** Endpoints to disable for `failing` (several workers may all see one: the disabling is conditional). */
  failing: string[];
}

/**
 * A retry as written: when it is due, on this process's clock, from how long PostgreSQL said it
 * was still to wait when the statement ended (no clock is compared across machines).
 */
export interface ScheduledRetry {
  deliveryId: string;
  dueAt: number;
}

export interface EndpointLimits {
  /** Endpoints with no free slot in this process: not claimed at all. */
  excluded: string[];
  /** Endpoints with some slots taken, or fewer of them after timeouts: at most this many each. */
  partial: ReadonlyMap<string, number>;
  /** Slots of any other endpoint. */
  perEndpoint: number;
}

/** The same per store (STORE_CONCURRENCY). */
export interface StoreLimits {
  /** Stores with no free slot in this process: not claimed at all. */
  excludedStores: string[];
  /** Stores with some slots taken: at most this many each. */
  partialStores: ReadonlyMap<string, number>;
  /** Slots of any other store. */
  perStore: number;
}

export type SlotLimits = EndpointLimits & StoreLimits;

/** Where a claim's turns among stores start, and how many stores at most have one. */
export interface StoreTurns {
  /** Stores after this one (in id order) come first, then the walk wraps around to the others. */
  after: string;
  stores: number;
}

/**
 * Slots a worker offers to the publishes of its own process: at most `limit` deliveries, within
 * the per-endpoint and per-store slots, leased for `leaseMs` under `leaseToken` (Dispatcher.offerSlots).
 */
export interface HandOff extends SlotLimits {
  limit: number;
  leaseMs: number;
  leaseToken: string;
}

export interface AttemptRow {
  number: number;
  trigger: AttemptTrigger;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
}

/**
 * A claim also takes deliveries due within this many milliseconds. A retry's due time is written
 * as PostgreSQL's now() plus the delay left, a few milliseconds after the worker set its timer for
 * it; a claim that came that little too early would leave the retry to the one-second sweep.
 */
export const CLAIM_EARLY_MS = 20;

/**
 * Stores that take turns in one claim, at most: each costs the claim a probe of the per-store due
 * index, and with more stores than this the next claim goes on from where this one stopped.
 */
export const STORE_TURNS = 32;

const SAFE_ID = /^[A-Za-z0-9_]+$/;

/**
 * Free slots by endpoint or store as the JSON object a claim or a hand-off looks them up in, by
 * key (hundreds of entries with thousands of endpoints). Written out directly: building an object
 * of that many keys for JSON.stringify took ten times as long. Hookline's ids need no escaping.
 */
export function slotsJson(slots: ReadonlyMap<string, number>): string {
  let json = '';
  for (const [id, free] of slots) json += `${json === '' ? '{' : ','}${SAFE_ID.test(id) ? `"${id}"` : JSON.stringify(id)}:${free}`;
  return json === '' ? '{}' : `${json}}`;
}

/** Left on the waiting deliveries of an endpoint made inactive. */
export const INACTIVE_ENDPOINT_ERROR = 'endpoint is inactive; retry the delivery once it is active again';

/** The attempt row of a worker that stopped (crashed, was killed) before recording a result. */
export const INTERRUPTED_ATTEMPT_ERROR = 'attempt interrupted: the worker stopped before recording a result';

/** The columns of an outcome in {@link DeliveryRepository.recordOutcomes}'s JSON parameter. */
const OUTCOME_COLUMNS = `id text, token text, status text, delay_ms double precision,
  last_status_code int, last_error text, record_attempt boolean, number int, trigger text, started_at timestamptz,
  duration_ms int, status_code int, error text, response_body text`;

/** The attempt rows and the decisions (see recordOutcomes); `updated` answers `extra` columns too. */
function recordOutcomesCtes(columns: string, extra: string, cluster = false): string {
  // On a Citus cluster (docs/scaling.md, "Citus"): the times are worked out before the updates
  // (Citus sends no now() inside a CASE to the shards), the deliveries are joined rather than
  // looked up by a lateral subquery, and the ordered release takes each endpoint's next by DISTINCT ON.
  return `WITH u AS (
    SELECT *${cluster ? ', now() + make_interval(secs => greatest(u.delay_ms, 0) / 1000) AS due, now() AS at' : ''}
    FROM json_to_recordset($1::json) AS u(${columns})
  ), attempts AS (
    INSERT INTO delivery_attempts (delivery_id, store_id, number, trigger, started_at, duration_ms, status_code, error, response_body)
    SELECT u.id, p.store_id, u.number, u.trigger, u.started_at, u.duration_ms, u.status_code, u.error, u.response_body
    FROM u ${cluster ? 'JOIN deliveries p ON p.id = u.id' : 'CROSS JOIN LATERAL (SELECT d.store_id FROM deliveries d WHERE d.id = u.id) AS p'}
    WHERE u.record_attempt
    -- A result written after its lease ran out (the database was away) replaces the
    -- "interrupted" row another worker put in its place: the log keeps what really happened.
    ON CONFLICT (delivery_id, number, store_id) DO UPDATE SET started_at = excluded.started_at,
      duration_ms = excluded.duration_ms, status_code = excluded.status_code, error = excluded.error,
      response_body = excluded.response_body
    WHERE delivery_attempts.error = '${INTERRUPTED_ATTEMPT_ERROR}'
  ), updated AS (
    UPDATE deliveries d
    SET status = u.status,
        next_attempt_at = CASE WHEN u.status = 'pending'
          THEN ${cluster ? 'u.due' : 'now() + make_interval(secs => greatest(u.delay_ms, 0) / 1000)'} ELSE NULL END,
        lease_token = NULL, last_status_code = u.last_status_code, last_error = u.last_error, updated_at = now()
    FROM u
    WHERE d.id = u.id AND d.lease_token = u.token
    RETURNING d.id, d.status, d.next_attempt_at, d.ordered, d.webhook_id AS endpoint${extra}
  ), released AS (
    -- An ordered delivery that ended lets the next of its endpoint go (claimDue held it). Not
    -- filtered on being held: a claim holding it right now is waited for, then overridden.
    -- The rows are looked up by their ids, worked out first; the status is checked in SET, on the
    -- row as it is once locked. A status in WHERE let the planner, whose statistics of a filling
    -- partition count few pending rows, read every pending delivery for each batch instead.
    UPDATE deliveries n
    SET next_attempt_at = CASE WHEN n.status = 'pending' THEN coalesce(n.next_attempt_at, ${cluster ? 'c.at' : 'now()'}) ELSE n.next_attempt_at END,
      updated_at = now()
    ${cluster ? 'FROM (SELECT now() AS at) c' : ''}
    WHERE n.id = ANY (ARRAY(${
      cluster
        ? `
      SELECT DISTINCT ON (p.store_id, p.webhook_id) p.id FROM deliveries p
      JOIN (SELECT DISTINCT endpoint, store_id FROM updated WHERE ordered AND status <> 'pending') ended
        ON p.store_id = ended.store_id AND p.webhook_id = ended.endpoint
      WHERE p.status = 'pending' AND p.ordered AND NOT (p.id = ANY ($2::text[]))
      ORDER BY p.store_id, p.webhook_id, p.event_id`
        : `
      SELECT next.id FROM (SELECT DISTINCT endpoint FROM updated WHERE ordered AND status <> 'pending') ended
      CROSS JOIN LATERAL (
        SELECT p.id FROM deliveries p
        WHERE p.webhook_id = ended.endpoint AND p.status = 'pending' AND p.ordered AND NOT (p.id = ANY ($2::text[]))
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
): string => `${recordOutcomesCtes(`${OUTCOME_COLUMNS}, stamp boolean`, ', d.store_id, u.stamp', cluster)}, cleared AS (
    UPDATE endpoint_health h SET last_success_at = now(), failing_since = NULL, failures = 0
    FROM (SELECT DISTINCT endpoint, store_id FROM updated WHERE stamp) c
    WHERE h.webhook_id = c.endpoint AND h.store_id = c.store_id AND (h.failures > 0 OR h.failing_since IS NOT NULL)
  )
  ${RETRIES}`;
const RECORD = record(false);
const RECORD_ON_CLUSTER = record(true);

/**
 * {@link RECORD}, and: a delivery that ends `failed` after an attempt counts against its
 * endpoint's health (a stamped success clears it); its webhook.delivery_failed event is written
 * with its deliveries (to the endpoints whose content filter it matches) when an active endpoint
 * of the store subscribes; answers the endpoints whose count crossed `$3` failures over `$4` ms.
 * All conditional on the decision being written.
 */
const recordWithHealth = (cluster: boolean): string => `${recordOutcomesCtes(
  `${OUTCOME_COLUMNS}, counts boolean, stamp boolean, notice_id text, notice_body text, notice_at timestamptz`,
  `, d.webhook_id, d.store_id, u.counts, u.stamp, u.notice_id, u.notice_body, u.notice_at`,
  cluster,
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
    INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
    SELECT 'del_' || substr(n.id, 5, 10) || left(replace(gen_random_uuid()::text, '-', ''), 16), n.store_id, n.id, w.id,
      'webhook.delivery_failed', now(), w.ordered
    FROM (SELECT id, store_id, ${envelopeForFilters('body')} AS envelope FROM notices OFFSET 0) n
    JOIN webhooks w ON w.store_id = n.store_id AND w.is_active AND 'webhook.delivery_failed' = ANY (w.events)
      AND ${passesFilter('w', 'n.envelope')}
    RETURNING 1
  ), woken AS (
    SELECT pg_notify('${DELIVERIES_CHANNEL}', '')::text FROM (SELECT 1 FROM notice_deliveries LIMIT 1) AS any_delivery
  )
  ${RETRIES}
  UNION ALL
  SELECT 'failing', webhook_id, NULL FROM health
  WHERE $3::int IS NOT NULL AND failures >= $3 AND failing_since <= now() - make_interval(secs => $4::double precision / 1000)
  UNION ALL
  SELECT 'woken', NULL, NULL FROM woken`;
const RECORD_WITH_HEALTH = recordWithHealth(false);
const RECORD_WITH_HEALTH_ON_CLUSTER = recordWithHealth(true);

/**
 * The worker's statements on deliveries and their attempts, on the dispatcher's pool. The hot path
 * (claim, record) is one SQL statement per batch, whatever the batch size; the API's reads are
 * DeliveryLog's.
 */
@Injectable()
export class DeliveryRepository implements OnApplicationShutdown {
  constructor(
    @Inject(DISPATCH_POOL) private readonly pool: Pool,
    @Optional() private readonly engine: DatabaseEngine = DatabaseEngine.plain,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  /**
   * Ends the waiting deliveries of an endpoint made inactive, in the transaction that made it so:
   * none of them is attempted afterwards. Attempts in flight finish and are recorded; if one fails,
   * the worker finds the endpoint inactive and ends that delivery the same way (AttemptRunner).
   */
  async failWaiting(manager: EntityManager, webhookId: string): Promise<void> {
    await manager.query(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, last_error = $2, updated_at = now()
       WHERE webhook_id = $1 AND status = 'pending' AND lease_token IS NULL`,
      [webhookId, INACTIVE_ENDPOINT_ERROR],
    );
  }

  /** Forgets an endpoint's failing count (it was made inactive): re-enabled, it starts afresh. */
  async clearHealth(manager: EntityManager, webhookId: string): Promise<void> {
    await manager.query(`DELETE FROM endpoint_health WHERE webhook_id = $1`, [webhookId]);
  }

  /**
   * A delivery already leased to the caller, who sends it itself (the endpoint test). Its id
   * carries the event's time, like every delivery's, so that it lives in its event's day partition.
   */
  async createLeased(
    manager: EntityManager,
    event: { storeId: string; eventId: string; eventType: string },
    webhookId: string,
    leaseToken: string,
    leaseMs: number,
  ): Promise<string> {
    const id = newIdAtTimeOf('del', event.eventId);
    await manager.query(
      `INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, attempt_count, cycle_attempts, lease_token, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, 1, 1, $6, now() + make_interval(secs => $7::double precision / 1000))`,
      [id, event.storeId, event.eventId, webhookId, event.eventType, leaseToken, leaseMs],
    );
    return id;
  }

  /**
   * Claims up to `limit` due deliveries for this worker (FOR UPDATE SKIP LOCKED: workers never
   * claim the same row), respecting per-store and per-endpoint slots, ordered endpoints and rate
   * limits, and leases them for `leaseMs`.
   *
   * Stores take turns (docs/scaling.md, "Fair dispatch"): the claim walks the stores with due
   * work in id order, starting after `turns.after` and wrapping around, at most `turns.stores` of
   * them, one probe of the per-store due index each, skipping those whose slots are all taken.
   * Each store that has a turn gets an even share of `limit`, within its free slots, and takes its
   * own due deliveries in due order from its own range of that index: one store's backlog, however
   * long, is never read to reach another's, and a store with one delivery due is served by the same
   * claim as one with a million.
   *
   * A due row that still holds a lease belongs to a worker that died mid-attempt (the lease ran
   * out): its attempt is recorded as interrupted here, in the same statement, since any claim
   * may take it up before the sweep would see it (a gap in the attempt log otherwise).
   *
   * Flow control (docs/reliability.md), in the same statement, so that every worker sees it:
   * - An ordered delivery goes only when no earlier delivery (by event id) of its endpoint is
   *   pending; one that must wait is held (`next_attempt_at` NULL) and leaves the due index until
   *   recordOutcomes releases it, so a long queue behind one delivery is not read by every claim.
   * - A rate-limited endpoint's deliveries count against its row of `endpoint_rate_windows` (the
   *   requests of the current second of the database clock), locked by the upsert, so concurrent
   *   claims take turns on it. The n-th request of a second goes out when n ≤ the limit; the
   *   others are put off by their place in line, paced at the limit from a second on (none dropped).
   * Deliveries of endpoints with neither setting pass through both steps untouched: one lookup of
   * the endpoint per claim, and nothing written.
   */
  async claimDue(
    limit: number,
    leaseMs: number,
    leaseToken: string,
    limits: SlotLimits,
    turns: StoreTurns = { after: '', stores: STORE_TURNS },
  ): Promise<ClaimBatch> {
    if (this.engine.citus) return this.claimDueOnCluster(limit, leaseMs, leaseToken, limits, turns);
    // A named (prepared) statement, so that it is not planned at every claim (docs/scaling.md).
    const result = await this.pool.query<ClaimRow>({
      name: 'hookline-claim',
      text: `WITH RECURSIVE walk(store_id, n, wrapped) AS (
         -- From the store $8 on, the next store with due work at each step (one probe of the
         -- per-store due index, whatever its backlog), around once at most: NULL marks the wrap.
         SELECT $8::text, 0, false
         UNION ALL
         SELECT nx.store_id, w.n + 1, w.wrapped OR nx.store_id IS NULL
         FROM walk w CROSS JOIN LATERAL (
           -- OFFSET 0: looked up once per step, not once for each place nx.store_id is read.
           SELECT (SELECT d.store_id FROM deliveries d
                   WHERE d.status = 'pending' AND d.store_id > coalesce(w.store_id, '')
                     AND d.next_attempt_at <= now() + make_interval(secs => $7::double precision / 1000)
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
           SELECT d.id, d.store_id, d.webhook_id, d.event_id, d.ordered, d.next_attempt_at, d.lease_token, d.attempt_count, d.cycle_attempts
           FROM deliveries d
           WHERE d.store_id = t.store_id AND d.status = 'pending'
             AND d.next_attempt_at <= now() + make_interval(secs => $7::double precision / 1000)
             AND NOT (d.webhook_id = ANY ($1::text[]))
           -- In the order of the per-store index, which the due index of all stores cannot give:
           -- with the statistics of today's partition behind, a generic plan otherwise read
           -- that partition's due index, every store's rows, for each store.
           ORDER BY d.store_id, d.next_attempt_at
           LIMIT least(t.available, t.share)
           FOR UPDATE SKIP LOCKED
         ) l
       ), gated AS (
         SELECT l.*, (NOT l.ordered OR NOT EXISTS (
           SELECT 1 FROM deliveries p
           WHERE p.webhook_id = l.webhook_id AND p.status = 'pending' AND p.ordered AND p.event_id < l.event_id
         )) AS free
         FROM locked l
       ), held AS (
         UPDATE deliveries d SET next_attempt_at = NULL, updated_at = now()
         FROM gated g WHERE d.id = g.id AND NOT g.free AND g.lease_token IS NULL
         RETURNING d.id
       ), ranked AS (
         -- Each row carries what the steps below need of it: with hash joins off on these
         -- connections (dispatch-pool.ts), joining two of these lists again compares every row with
         -- every row; the free slots of endpoints are one JSON object, looked up by key.
         SELECT id, store_id, webhook_id, lease_token, next_attempt_at, attempt_count, cycle_attempts,
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
           SELECT w.rate_limit_per_second AS per_second FROM webhooks w WHERE w.id = f.webhook_id AND w.store_id = f.store_id OFFSET 0
         ) w
         WHERE w.per_second IS NOT NULL
       ), windows AS (
         INSERT INTO endpoint_rate_windows AS r (webhook_id, store_id, window_start, requests)
         -- In endpoint order, so that two claims lock the rows of several endpoints in the same order.
         SELECT webhook_id, store_id, date_trunc('second', now()), wanted FROM limited ORDER BY webhook_id
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
         UPDATE deliveries d SET next_attempt_at = p.put_off_to, updated_at = now()
         FROM placed p
         WHERE d.id = p.id AND p.put_off AND p.lease_token IS NULL
         RETURNING d.next_attempt_at
       ), interrupted AS (
         INSERT INTO delivery_attempts (delivery_id, store_id, number, trigger, started_at, duration_ms, status_code, error, response_body)
         SELECT c.id, c.store_id, c.attempt_count,
           CASE WHEN c.cycle_attempts = 1 AND c.attempt_count > 1 THEN 'manual' ELSE 'scheduled' END,
           c.next_attempt_at - make_interval(secs => $5::double precision / 1000), 0, NULL, '${INTERRUPTED_ATTEMPT_ERROR}', NULL
         FROM chosen c
         WHERE c.lease_token IS NOT NULL AND c.attempt_count > 0
         ON CONFLICT DO NOTHING
       ), claimed AS (
         -- Only the chosen rows, each found by its key in the partition of its id; the event and the
         -- endpoint are looked up below, one row each, so that the plan cannot start from them.
         UPDATE deliveries d
         SET next_attempt_at = now() + make_interval(secs => $5::double precision / 1000), lease_token = $6,
             attempt_count = d.attempt_count + 1, cycle_attempts = d.cycle_attempts + 1, updated_at = now()
         FROM chosen c
         WHERE d.id = c.id
         RETURNING d.id, d.store_id, d.event_id, d.webhook_id, d.event_type, d.attempt_count, d.cycle_attempts, d.ordered
       ), sent AS (
         SELECT d.id, d.event_id AS "eventId", d.webhook_id AS "webhookId", d.store_id AS "storeId",
           d.attempt_count AS "attemptNumber", d.cycle_attempts AS "cycleAttempt", d.event_type AS "eventType",
           e.body, e.traceparent,
           w.url, w.secret_encrypted AS "secretSealed", w.is_active AS "webhookActive",
           CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END AS "previousSecretSealed",
           ${headersRevision('w')} AS "headersRevision", w.retry_schedule AS "retrySchedule", d.ordered
         FROM claimed d
         -- By its key, one row each, whatever the statistics said when the plan was made (above).
         LEFT JOIN LATERAL (SELECT e.body, e.traceparent FROM events e WHERE e.id = d.event_id AND e.store_id = d.store_id OFFSET 0) e ON true
         CROSS JOIN LATERAL (SELECT * FROM webhooks w WHERE w.id = d.webhook_id AND w.store_id = d.store_id OFFSET 0) w
       )
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
      values: [
        limits.excluded,
        limit,
        slotsJson(limits.partial),
        limits.perEndpoint,
        leaseMs,
        leaseToken,
        CLAIM_EARLY_MS,
        turns.after,
        turns.stores,
        limits.excludedStores,
        slotsJson(limits.partialStores),
        limits.perStore,
      ],
    });
    const answeredAt = Date.now();
    const meta = result.rows.find((row) => row.crowdedStores !== null);
    return {
      deliveries: result.rows
        .filter((row) => row.id !== null)
        .map(({ turnsCut: _t, crowdedStores: _c, lastStore: _s, deferredDueInMs: _d, ...delivery }) => delivery),
      turnsCut: meta?.turnsCut ?? false,
      crowdedStores: meta?.crowdedStores ?? [],
      lastStore: meta?.lastStore ?? null,
      deferredDueAt: (meta?.deferredDueInMs ?? []).map((ms) => answeredAt + Number(ms)),
    };
  }

  /**
   * {@link claimDue} on a Citus cluster (docs/scaling.md, "Citus"): the stores with due work are
   * asked of every shard, and each store that has a turn is claimed by a statement of its own,
   * which runs on the one shard holding it, so that `FOR UPDATE SKIP LOCKED` holds there.
   */
  private async claimDueOnCluster(
    limit: number,
    leaseMs: number,
    leaseToken: string,
    limits: SlotLimits,
    storeTurns: StoreTurns,
  ): Promise<ClaimBatch> {
    const due = await this.pool.query<{ store_id: string }>({
      name: `hookline-${DUE_STORES.name}`,
      text: DUE_STORES.text,
      values: [CLAIM_EARLY_MS],
    });
    const { turns, cut } = clusterTurns(
      due.rows.map((row) => row.store_id),
      storeTurns.after,
      storeTurns.stores,
      new Set(limits.excludedStores),
      limit,
    );
    const batch: ClaimBatch = { deliveries: [], turnsCut: cut, crowdedStores: [], lastStore: null, deferredDueAt: [] };
    for (const { storeId, share } of turns) {
      const result = await this.pool.query<ClaimRow>({
        name: `hookline-${CLAIM_ONE_STORE.name}`,
        text: CLAIM_ONE_STORE.text,
        values: [
          limits.excluded,
          share,
          slotsJson(limits.partial),
          limits.perEndpoint,
          leaseMs,
          leaseToken,
          CLAIM_EARLY_MS,
          storeId,
          limits.excludedStores,
          slotsJson(limits.partialStores),
          limits.perStore,
          INTERRUPTED_ATTEMPT_ERROR,
        ],
      });
      const answeredAt = Date.now();
      for (const { turnsCut: _t, crowdedStores, lastStore: _s, deferredDueInMs, ...delivery } of result.rows) {
        if (delivery.id !== null) batch.deliveries.push(delivery);
        batch.crowdedStores.push(...(crowdedStores ?? []));
        batch.deferredDueAt.push(...(deferredDueInMs ?? []).map((ms) => answeredAt + Number(ms)));
      }
      batch.lastStore = storeId;
    }
    return batch;
  }

  /**
   * Writes a batch of attempt rows and the decisions taken on them in one statement. A decision
   * applies only while the worker still holds the lease; the attempt row is kept either way, since
   * the request was really sent. Answers the retries it scheduled, with when they are due: a
   * retry's due time is PostgreSQL's now() plus the delay left, and that now() can come later
   * than the delay was reckoned (the statement waited for a connection, or for a CPU).
   *
   * In the same statement, so exactly once with the decision: a delivery that ends `failed` after
   * an attempt counts against its endpoint's health (and a stamped success clears it), and its
   * webhook.delivery_failed event is written with its deliveries when an active endpoint of the
   * store subscribes. Answers the endpoints whose health crossed `thresholds`. None of this costs
   * a delivery that succeeds, but for the stamp EndpointHealth asks for now and then.
   */
  async recordOutcomes(outcomes: AttemptOutcome[], thresholds?: DisableThresholds): Promise<RecordedOutcomes> {
    if (outcomes.length === 0) return { scheduled: [], failing: [] };
    const now = Date.now();
    // One attempt row per (delivery, number): ON CONFLICT DO UPDATE may not touch a row twice.
    const seen = new Set<string>();
    const health = outcomes.some((o) => (o.status === 'failed' && o.attempt !== null && o.probe !== true) || o.failureEvent !== undefined);
    const rows = outcomes.map((o) => {
      const attemptKey = o.attempt ? `${o.deliveryId} ${o.attempt.number}` : undefined;
      const recordAttempt = attemptKey !== undefined && !seen.has(attemptKey);
      if (attemptKey) seen.add(attemptKey);
      const row: Record<string, unknown> = {
        id: o.deliveryId,
        token: o.leaseToken,
        status: o.status,
        // The delay counts from the decision, not from this (possibly later) write.
        delay_ms: o.retryDelayMs - (now - o.decidedAt),
        last_status_code: o.lastStatusCode,
        last_error: o.lastError,
        record_attempt: recordAttempt,
        number: o.attempt?.number ?? null,
        trigger: o.attempt?.trigger ?? null,
        started_at: o.attempt?.startedAt.toISOString() ?? null,
        duration_ms: o.attempt?.durationMs ?? null,
        status_code: o.attempt?.statusCode ?? null,
        error: o.attempt?.error ?? null,
        response_body: o.attempt?.responseBody ?? null,
      };
      // Only what is set: an absent key reads as NULL, and with thousands of endpoints most
      // batches carry a stamp or two among hundreds of plain successes.
      if (o.status === 'succeeded' && o.stampSuccess === true) row.stamp = true;
      if (!health) return row;
      if (o.status === 'failed' && o.attempt !== null && o.probe !== true && o.sparesEndpoint !== true) row.counts = true;
      if (o.failureEvent) {
        row.notice_id = o.failureEvent.id;
        row.notice_body = o.failureEvent.body;
        row.notice_at = o.failureEvent.createdAt.toISOString();
      }
      return row;
    });
    // One JSON parameter rather than fourteen arrays: JSON.stringify is native, while pg escapes
    // every array element in JavaScript. Each delivery is looked up by its id from its row of the
    // JSON (a nested loop on the primary key, in the one partition its id belongs to): matching
    // the ids as an array would read every partition, and with hash joins off (dispatch-pool.ts)
    // compare every row with every row.
    // A named statement, so that it is not planned at every flush; the dispatch connections keep
    // its generic plan an index plan as the table grows (dispatch-pool.ts, docs/scaling.md).
    // Batches without a failure (nearly all of them) take the statement without the health part,
    // which costs PostgreSQL more CPU per delivery (docs/scaling.md).
    // The ids again as an array only to keep the batch's own deliveries out of the ordered release.
    const values = [JSON.stringify(rows), outcomes.map((o) => o.deliveryId)];
    const result = await this.pool.query<{ kind: 'retry' | 'failing' | 'woken'; id: string; dueInMs: number }>(
      health
        ? {
            name: 'hookline-record-health',
            text: this.engine.citus ? RECORD_WITH_HEALTH_ON_CLUSTER : RECORD_WITH_HEALTH,
            values: [...values, thresholds?.minFailures ?? null, thresholds?.afterMs ?? 0],
          }
        : { name: 'hookline-record', text: this.engine.citus ? RECORD_ON_CLUSTER : RECORD, values },
    );
    const answeredAt = Date.now();
    const scheduled: ScheduledRetry[] = [];
    const failing: string[] = [];
    for (const row of result.rows) {
      if (row.kind === 'retry') scheduled.push({ deliveryId: row.id, dueAt: answeredAt + Number(row.dueInMs) });
      else if (row.kind === 'failing') failing.push(row.id);
    }
    return { scheduled, failing };
  }

  /** Gives claimed deliveries back unattempted (graceful shutdown): due at once for any worker. */
  async releaseLeases(ids: string[], leaseToken: string): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query(
      `UPDATE deliveries SET next_attempt_at = now(), lease_token = NULL,
         attempt_count = attempt_count - 1, cycle_attempts = cycle_attempts - 1, updated_at = now()
       WHERE id = ANY($1::text[]) AND lease_token = $2`,
      [ids, leaseToken],
    );
  }

  /**
   * Releases the first waiting delivery of each ordered endpoint when it is held with nothing ahead
   * of it: the safety net under recordOutcomes's release, for a claim that held a delivery on a view
   * taken just before the one ahead of it ended. Reads one index entry per ordered endpoint with
   * pending deliveries (a skip scan), nothing when there are none.
   */
  async releaseStalledOrdered(): Promise<number> {
    if (this.engine.citus) {
      // No skip scan across shards: each shard answers the first pending delivery of each ordered endpoint.
      const released = await this.pool.query({
        name: 'hookline-release-stalled-on-cluster',
        text: `UPDATE deliveries d SET next_attempt_at = now(), updated_at = now()
         FROM (SELECT DISTINCT ON (store_id, webhook_id) store_id, id, next_attempt_at FROM deliveries
               WHERE status = 'pending' AND ordered ORDER BY store_id, webhook_id, event_id) h
         WHERE d.store_id = h.store_id AND d.id = h.id AND h.next_attempt_at IS NULL AND d.status = 'pending' AND d.next_attempt_at IS NULL`,
      });
      return released.rowCount ?? 0;
    }
    const result = await this.pool.query({
      name: 'hookline-release-stalled',
      text: `WITH RECURSIVE heads AS (
         (SELECT webhook_id, id, next_attempt_at FROM deliveries WHERE status = 'pending' AND ordered ORDER BY webhook_id, event_id LIMIT 1)
         UNION ALL
         SELECT n.webhook_id, n.id, n.next_attempt_at FROM heads h CROSS JOIN LATERAL (
           SELECT webhook_id, id, next_attempt_at FROM deliveries
           WHERE status = 'pending' AND ordered AND webhook_id > h.webhook_id ORDER BY webhook_id, event_id LIMIT 1
         ) n
       )
       UPDATE deliveries d SET next_attempt_at = now(), updated_at = now()
       FROM heads h WHERE d.id = h.id AND h.next_attempt_at IS NULL AND d.status = 'pending' AND d.next_attempt_at IS NULL`,
    });
    return result.rowCount ?? 0;
  }

  /**
   * When the next pending delivery that no worker holds is due, if any. A lease that runs out (its
   * worker died) is left to the one-second sweep: the index read here holds no leased delivery.
   */
  async nextDueAt(): Promise<Date | null> {
    const result = await this.pool.query<{ at: Date | null }>({
      name: 'hookline-next-due',
      text: `SELECT min(next_attempt_at) AS at FROM deliveries WHERE status = 'pending' AND lease_token IS NULL`,
    });
    return result.rows[0]?.at ?? null;
  }
}
