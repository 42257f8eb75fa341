import { Inject, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Pool } from 'pg';
import { newIdAtTimeOf } from '../../common/ids';
import { DISPATCH_POOL } from './dispatch-pool';
import { poolSql, typeormSql, type Sql } from '../../database/sql';
import { DELIVERIES_CHANNEL } from './deliveries-channel';
import type { AttemptTrigger } from './delivery-attempt.entity';
import type { DeliveryStatus } from './delivery.entity';
import type { OperationalEvent } from '../../catalogue/operational-events';
import { DatabaseEngine } from '../../database/database-engine';
import { CLAIM_ONE_STORE, DUE_STORES } from './citus-claim.sql';
import { clusterTurns } from './cluster-turns';
import {
  CLAIM,
  CLEAR_HEALTH,
  CREATE_LEASED,
  FAIL_WAITING,
  NEXT_DUE,
  NEXT_DUE_ON_CLUSTER,
  RECORD,
  RECORD_ON_CLUSTER,
  RECORD_WITH_HEALTH,
  RECORD_WITH_HEALTH_ON_CLUSTER,
  RELEASE_LEASES,
  RELEASE_STALLED,
  RELEASE_STALLED_ON_CLUSTER,
} from './delivery.sql';

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
  /** False for a delivery created for an endpoint that is not ordered: its end releases no other. Unset: may be ordered. */
  ordered?: boolean;
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

/**
 * A claim answers an event's body and trace on one of its deliveries only (CLAIM): each of the
 * others gets them from that one. A delivery whose event is gone keeps a null body, as before.
 */
export function withEventBodies<T extends { eventId: string; body: string | null; traceparent?: string | null }>(deliveries: T[]): T[] {
  const events = new Map<string, T>();
  for (const delivery of deliveries) if (delivery.body !== null) events.set(delivery.eventId, delivery);
  for (const delivery of deliveries) {
    if (delivery.body !== null) continue;
    const carrier = events.get(delivery.eventId);
    if (carrier) {
      delivery.body = carrier.body;
      delivery.traceparent = carrier.traceparent;
    }
  }
  return deliveries;
}

/** Left on the waiting deliveries of an endpoint made inactive. */
export const INACTIVE_ENDPOINT_ERROR = 'endpoint is inactive; retry the delivery once it is active again';

/** The attempt row of a worker that stopped (crashed, was killed) before recording a result. */
export const INTERRUPTED_ATTEMPT_ERROR = 'attempt interrupted: the worker stopped before recording a result';

/**
 * The worker's statements on deliveries and their attempts, on the dispatcher's pool; their text
 * is in `delivery.sql.ts`. The hot path (claim, record) is one SQL statement per batch, whatever
 * the batch size; the API's reads are DeliveryLog's.
 */
@Injectable()
export class DeliveryRepository implements OnApplicationShutdown {
  private readonly sql: Sql;

  constructor(
    @Inject(DISPATCH_POOL) private readonly pool: Pool,
    @Optional() private readonly engine: DatabaseEngine = DatabaseEngine.plain,
  ) {
    this.sql = poolSql(pool);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  /**
   * Ends the waiting deliveries of an endpoint made inactive, in the transaction that made it so:
   * none of them is attempted afterwards. Attempts in flight finish and are recorded; if one fails,
   * the worker finds the endpoint inactive and ends that delivery the same way (AttemptRunner).
   */
  async failWaiting(manager: EntityManager, webhookId: string): Promise<void> {
    await typeormSql(manager).rows(FAIL_WAITING, [webhookId, INACTIVE_ENDPOINT_ERROR]);
  }

  /** Forgets an endpoint's failing count (it was made inactive): re-enabled, it starts afresh. */
  async clearHealth(manager: EntityManager, webhookId: string): Promise<void> {
    await typeormSql(manager).rows(CLEAR_HEALTH, [webhookId]);
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
    await typeormSql(manager).rows(CREATE_LEASED, [id, event.storeId, event.eventId, webhookId, event.eventType, leaseToken, leaseMs]);
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
    const rows = await this.sql.rows<ClaimRow>(CLAIM, [
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
      INTERRUPTED_ATTEMPT_ERROR,
    ]);
    const answeredAt = Date.now();
    const meta = rows.find((row) => row.crowdedStores !== null);
    return {
      deliveries: withEventBodies(
        rows
          .filter((row) => row.id !== null)
          .map(({ turnsCut: _t, crowdedStores: _c, lastStore: _s, deferredDueInMs: _d, ...delivery }) => delivery),
      ),
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
    const due = await this.sql.rows<{ store_id: string }>(DUE_STORES, [CLAIM_EARLY_MS]);
    const { turns, cut } = clusterTurns(
      due.map((row) => row.store_id),
      storeTurns.after,
      storeTurns.stores,
      new Set(limits.excludedStores),
      limit,
    );
    const batch: ClaimBatch = { deliveries: [], turnsCut: cut, crowdedStores: [], lastStore: null, deferredDueAt: [] };
    for (const { storeId, share } of turns) {
      const rows = await this.sql.rows<ClaimRow>(CLAIM_ONE_STORE, [
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
      ]);
      const answeredAt = Date.now();
      for (const { turnsCut: _t, crowdedStores, lastStore: _s, deferredDueInMs, ...delivery } of rows) {
        if (delivery.id !== null) batch.deliveries.push(delivery);
        batch.crowdedStores.push(...(crowdedStores ?? []));
        batch.deferredDueAt.push(...(deferredDueInMs ?? []).map((ms) => answeredAt + Number(ms)));
      }
      batch.lastStore = storeId;
    }
    batch.deliveries = withEventBodies(batch.deliveries);
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
    const token = outcomes[0].leaseToken;
    // One attempt row per (delivery, number): ON CONFLICT DO UPDATE may not touch a row twice.
    const seen = new Set<string>();
    const health = outcomes.some((o) => (o.status === 'failed' && o.attempt !== null && o.probe !== true) || o.failureEvent !== undefined);
    const rows = outcomes.map((o) => {
      const attemptKey = o.attempt ? `${o.deliveryId} ${o.attempt.number}` : undefined;
      const recordAttempt = attemptKey !== undefined && !seen.has(attemptKey);
      if (attemptKey) seen.add(attemptKey);
      // Only what is set: an absent key reads as NULL (and record_attempt as false). Every byte of a
      // batch is written to PostgreSQL's socket and parsed there, for every result.
      const row: Record<string, unknown> = { id: o.deliveryId, status: o.status };
      // The batch's token is a parameter of its own: a row names one only when it differs.
      if (o.leaseToken !== token) row.token = o.leaseToken;
      // The delay counts from the decision, not from this (possibly later) write.
      if (o.status === 'pending') row.delay_ms = o.retryDelayMs - (now - o.decidedAt);
      if (o.lastStatusCode !== null) row.last_status_code = o.lastStatusCode;
      if (o.lastError !== null) row.last_error = o.lastError;
      if (o.attempt) {
        if (recordAttempt) row.record_attempt = true;
        row.number = o.attempt.number;
        row.trigger = o.attempt.trigger;
        row.started_at = o.attempt.startedAt.toISOString();
        row.duration_ms = o.attempt.durationMs;
        if (o.attempt.statusCode !== null) row.status_code = o.attempt.statusCode;
        if (o.attempt.error !== null) row.error = o.attempt.error;
        if (o.attempt.responseBody !== null) row.response_body = o.attempt.responseBody;
      }
      // With thousands of endpoints most batches carry a stamp or two among hundreds of plain successes.
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
    // The ids again as an array only to keep the batch's own deliveries out of the ordered release,
    // which a batch of deliveries known not to be ordered does not make.
    const released = outcomes.some((o) => o.ordered !== false) ? outcomes.map((o) => o.deliveryId) : [];
    const values = [JSON.stringify(rows), released];
    type Row = { kind: 'retry' | 'failing' | 'woken'; id: string; dueInMs: number };
    const answer = health
      ? await this.sql.rows<Row>(this.engine.citus ? RECORD_WITH_HEALTH_ON_CLUSTER : RECORD_WITH_HEALTH, [
          ...values,
          thresholds?.minFailures ?? null,
          thresholds?.afterMs ?? 0,
          INTERRUPTED_ATTEMPT_ERROR,
          DELIVERIES_CHANNEL,
          token,
        ])
      : await this.sql.rows<Row>(this.engine.citus ? RECORD_ON_CLUSTER : RECORD, [...values, INTERRUPTED_ATTEMPT_ERROR, token]);
    const answeredAt = Date.now();
    const scheduled: ScheduledRetry[] = [];
    const failing: string[] = [];
    for (const row of answer) {
      if (row.kind === 'retry') scheduled.push({ deliveryId: row.id, dueAt: answeredAt + Number(row.dueInMs) });
      else if (row.kind === 'failing') failing.push(row.id);
    }
    return { scheduled, failing };
  }

  /** Gives claimed deliveries back unattempted (graceful shutdown): due at once for any worker. */
  async releaseLeases(ids: string[], leaseToken: string): Promise<void> {
    if (ids.length === 0) return;
    await this.sql.rows(RELEASE_LEASES, [ids, leaseToken]);
  }

  /**
   * Releases the first waiting delivery of each ordered endpoint when it is held with nothing ahead
   * of it: the safety net under recordOutcomes's release, for a claim that held a delivery on a view
   * taken just before the one ahead of it ended. Reads one index entry per ordered endpoint with
   * pending deliveries (a skip scan), nothing when there are none.
   */
  async releaseStalledOrdered(): Promise<number> {
    // On a Citus cluster there is no skip scan across shards: each shard answers its own.
    const [{ released }] = await this.sql.rows<{ released: number }>(this.engine.citus ? RELEASE_STALLED_ON_CLUSTER : RELEASE_STALLED);
    return released;
  }

  /**
   * When the next pending delivery that no worker holds is due, if any; once one is due, possibly
   * not the earliest past time (the caller claims at once either way). A lease that runs out (its
   * worker died) is left to the one-second sweep.
   */
  async nextDueAt(): Promise<Date | null> {
    const [row] = await this.sql.rows<{ at: Date | null }>(this.engine.citus ? NEXT_DUE_ON_CLUSTER : NEXT_DUE);
    return row?.at ?? null;
  }
}
