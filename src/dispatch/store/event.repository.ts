import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { SqlPool } from '../../database/sql-pool';
import { DELIVERIES_CHANNEL } from './deliveries-channel';
import { slotsJson, type HandOff } from './delivery.repository';
import { deliveriesOfEvent } from './event-deliveries';
import { headersRevision } from '../../webhooks/webhook.repository';
import { envelopeForFilters, passesFilter } from '../../webhooks/content-filter';

export interface StoredEvent {
  id: string;
  type: string;
  body: string;
  createdAt: Date;
}

/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

export interface NewEvent {
  id: string;
  storeId: string;
  type: string;
  body: string;
  createdAt: Date;
  idempotencyKey?: string;
  /** The publish span's W3C traceparent, with tracing on: each attempt's span is its child. */
  traceparent?: string;
}

/**
 * The whole of a publish in one statement, so one round trip and no explicit transaction: insert
 * the event (or nothing, when its Idempotency-Key is taken), one pending delivery for each of the
 * store's active endpoints subscribed to the type whose content filter, if any, it matches, due
 * after `$8` ms, and a NOTIFY that wakes the workers when (and only if) this commits. Delivery ids
 * are `del_` + the event's time part + 64 random bits, so they sort by time like every other id and
 * fall in their event's day partition (every writer of deliveries keeps that: retention drops a
 * day's events and deliveries together).
 */
const PUBLISH = `
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
    INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
    SELECT 'del_' || $7 || left(replace(gen_random_uuid()::text, '-', ''), 16), $2, ev.id, w.id, $3,
      now() + make_interval(secs => $8::double precision / 1000), w.ordered
    -- The envelope parsed here, once per event (OFFSET 0), not in RETURNING: on a Citus cluster
    -- RETURNING runs on the shard, where its look at every store's endpoints cannot run.
    FROM (SELECT id, ${envelopeForFilters('body')} AS envelope FROM ev OFFSET 0) ev
    JOIN webhooks w ON w.store_id = $2 AND w.is_active AND $3 = ANY (w.events) AND ${passesFilter('w', 'ev.envelope')}
    RETURNING 1
  ), woken AS (
    -- As text: Citus keeps a CTE's rows as a result of its own, which a void column cannot be.
    SELECT pg_notify('${DELIVERIES_CHANNEL}', '')::text FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery
  )
  SELECT (SELECT count(*) FROM ev)::int AS inserted,
    (SELECT count(*) FROM fanned_out)::int AS deliveries,
    (SELECT count(*) FROM woken)::int AS woken`;

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
 * With a hand-off (`handOff`, `$3` > 0) the first `$3` deliveries, within the per-endpoint and
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
    INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, next_attempt_at, ordered)
    SELECT ${deliveryId}, p.store_id, p.event_id, p.webhook_id, p.type, now() + make_interval(secs => $2::double precision / 1000), p.ordered
    FROM (SELECT ev.id AS event_id, ev.store_id, ev.type, w.id AS webhook_id, w.ordered
          FROM (SELECT id, store_id, type, ${envelopeForFilters('body')} AS envelope FROM ev OFFSET 0) ev
          JOIN webhooks w ON w.store_id = ev.store_id AND w.is_active AND ev.type = ANY (w.events)
            AND ${passesFilter('w', 'ev.envelope')}) p
    RETURNING event_id
  ), woken AS (
    SELECT pg_notify('${DELIVERIES_CHANNEL}', '')::text FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery
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
    SELECT t.*, (NOT (t.webhook_id = ANY ($4::text[])) AND t.k <= coalesce(($5::jsonb ->> t.webhook_id)::int, $6)
      AND NOT t.ordered AND NOT t.rate_limited AND NOT (t.store_id = ANY ($9::text[]))) AS fits
    FROM targets t
  ), fitting_store AS (
    SELECT f.*, (f.fits AND row_number() OVER (PARTITION BY f.fits, f.store_id ORDER BY f.event_id, f.webhook_id)
      <= coalesce(($10::jsonb ->> f.store_id)::int, $11)) AS fits_store
    FROM fitting f
  ), placed AS (
    SELECT f.*, (f.fits_store AND row_number() OVER (PARTITION BY f.fits_store ORDER BY f.event_id, f.webhook_id) <= $3) AS leased
    FROM fitting_store f
  ), fanned_out AS (
    INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, next_attempt_at, lease_token, attempt_count, cycle_attempts, ordered)
    SELECT ${deliveryId}, p.store_id, p.event_id, p.webhook_id, p.type,
      now() + make_interval(secs => CASE WHEN p.leased THEN $7::double precision ELSE $2::double precision END / 1000),
      CASE WHEN p.leased THEN $8 END, p.leased::int, p.leased::int, p.ordered
    FROM placed p
    RETURNING id, event_id, webhook_id, store_id, lease_token IS NOT NULL AS leased
  ), woken AS (
    SELECT pg_notify('${DELIVERIES_CHANNEL}', CASE WHEN bool_and(f.webhook_id = ANY ($4::text[]) OR f.store_id = ANY ($9::text[])) THEN $8 ELSE '' END)::text
    FROM fanned_out f WHERE NOT f.leased HAVING count(*) > 0
  )${answer(`(SELECT coalesce(json_agg(json_build_array(f.id, f.event_id, f.webhook_id, w.url, w.secret_encrypted,
       CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END, ${headersRevision('w')}, w.retry_schedule)), '[]')
     FROM fanned_out f JOIN webhooks w ON w.id = f.webhook_id AND w.store_id = f.store_id WHERE f.leased)`)}`;
}

/** The statements of {@link publishManyStatement}, by `withKeys` then `handOff`. */
const PUBLISH_MANY = {
  plain: {
    direct: publishManyStatement({ withKeys: false, handOff: false }),
    handOff: publishManyStatement({ withKeys: false, handOff: true }),
  },
  keys: {
    direct: publishManyStatement({ withKeys: true, handOff: false }),
    handOff: publishManyStatement({ withKeys: true, handOff: true }),
  },
};

/** A delivery written already leased by {@link EventRepository.publishMany}. */
export interface LeasedDelivery {
  id: string;
  eventId: string;
  webhookId: string;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  headersRevision: string | null;
  retrySchedule: number[] | null;
}

/** A leased delivery as the statement answers it: [id, eventId, webhookId, url, secretSealed, previousSecretSealed, headersRevision, retrySchedule]. */
type LeasedRow = [string, string, string, string, string, string | null, string | null, number[] | null];

export interface PublishedBatch {
  /** Fan-out count by event id. */
  counts: Map<string, number>;
  /** Events not written because another event of their store holds their Idempotency-Key. */
  skipped: string[];
  /** The deliveries leased to the hand-off's worker (none without one). */
  leased: LeasedDelivery[];
}

@Injectable()
export class EventRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly pool: SqlPool,
  ) {}

  /**
   * Publishes `event` (see {@link PUBLISH}); in the caller's transaction when `manager` is given.
   * Returns null when the Idempotency-Key belongs to an event of the last 24 hours.
   */
  async publish(event: NewEvent, firstDelayMs: number, manager?: EntityManager): Promise<{ deliveries: number } | null> {
    if (event.idempotencyKey !== undefined) await this.expireIdempotencyKey(event.storeId, event.idempotencyKey, manager);
    const values = [
      event.id,
      event.storeId,
      event.type,
      event.body,
      event.idempotencyKey ?? null,
      event.createdAt.toISOString(),
      timePart(event.id),
      firstDelayMs,
      event.traceparent ?? null,
    ];
    const rows: Array<{ inserted: number; deliveries: number }> = manager
      ? await manager.query(PUBLISH, values)
      : (await this.pool.query<{ inserted: number; deliveries: number }>({ name: 'hookline-publish', text: PUBLISH, values })).rows;
    return rows[0].inserted === 1 ? { deliveries: rows[0].deliveries } : null;
  }

  /**
   * Publishes several events in one statement (see {@link PUBLISH_MANY}); in the caller's
   * transaction when `manager` is given. Events with an Idempotency-Key that another event of their
   * store holds are not written (`skipped`); the caller first frees keys past their window
   * ({@link releaseExpiredKeys}). With a hand-off, some of the deliveries are leased to its worker;
   * never in a caller's transaction, which the worker could not wait for.
   */
  async publishMany(events: NewEvent[], firstDelayMs: number, handOff?: HandOff, manager?: EntityManager): Promise<PublishedBatch> {
    if (handOff && manager) throw new Error('a hand-off cannot join a caller’s transaction');
    const withKeys = events.some((event) => event.idempotencyKey !== undefined);
    const rows = events.map((event) => ({
      id: event.id,
      store_id: event.storeId,
      type: event.type,
      body: event.body,
      created_at: event.createdAt.toISOString(),
      // Left out of the JSON when undefined (tracing off): the column is then NULL.
      traceparent: event.traceparent,
      idempotency_key: withKeys ? (event.idempotencyKey ?? null) : undefined,
    }));
    const text = PUBLISH_MANY[withKeys ? 'keys' : 'plain'][handOff ? 'handOff' : 'direct'];
    const name = `hookline-publish-many${withKeys ? '-keys' : ''}${handOff ? '-hand-off' : ''}`;
    const values: unknown[] = [JSON.stringify(rows), firstDelayMs];
    if (handOff) {
      values.push(
        handOff.limit,
        handOff.excluded,
        slotsJson(handOff.partial),
        handOff.perEndpoint,
        handOff.leaseMs,
        handOff.leaseToken,
        handOff.excludedStores,
        slotsJson(handOff.partialStores),
        handOff.perStore,
      );
    }
    type Row = { counts: Record<string, number>; inserted: number; skipped: string[]; leased: LeasedRow[] };
    const [{ counts, inserted, skipped, leased }]: Row[] = manager
      ? await manager.query(text, values)
      : (await this.pool.query<Row>({ name, text, values })).rows;
    if (inserted + skipped.length !== events.length) throw new Error(`published ${inserted} of ${events.length} events`);
    return {
      counts: new Map(events.map((event) => [event.id, counts[event.id] ?? 0])),
      skipped,
      leased: leased.map(([id, eventId, webhookId, url, secretSealed, previousSecretSealed, headersRevision, retrySchedule]) => ({
        id,
        eventId,
        webhookId,
        url,
        secretSealed,
        previousSecretSealed,
        headersRevision,
        retrySchedule,
      })),
    };
  }

  /** Inserts an event with no fan-out (the endpoint test writes its one delivery itself). */
  async insert(manager: EntityManager, event: NewEvent): Promise<void> {
    await manager.query(`INSERT INTO events (id, store_id, type, body, created_at, traceparent) VALUES ($1, $2, $3, $4, $5, $6)`, [
      event.id,
      event.storeId,
      event.type,
      event.body,
      event.createdAt.toISOString(),
      event.traceparent ?? null,
    ]);
  }

  /**
   * An Idempotency-Key older than 24 hours is free again: its old holder gives it up. So is one
   * whose event retention removed (a day is only removed once older than the window anyway).
   */
  private async expireIdempotencyKey(storeId: string, key: string, manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource).query(
      `DELETE FROM idempotency_keys k
       WHERE k.store_id = $1 AND k.key = $2
         AND (k.created_at < now() - make_interval(hours => $3)
           OR NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id AND e.store_id = k.store_id))`,
      [storeId, key, IDEMPOTENCY_WINDOW_HOURS],
    );
  }

  /** {@link expireIdempotencyKey} for the keys of a batch, in one statement. */
  async releaseExpiredKeys(storeId: string, keys: string[], manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource).query(
      `DELETE FROM idempotency_keys k
       WHERE k.store_id = $1 AND k.key = ANY ($2::text[])
         AND (k.created_at < now() - make_interval(hours => $3)
           OR NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id AND e.store_id = k.store_id))`,
      [storeId, keys, IDEMPOTENCY_WINDOW_HOURS],
    );
  }

  /** The events holding these idempotency keys, with their fan-out counts, by key. */
  async findByIdempotencyKeys(
    storeId: string,
    keys: string[],
    manager?: EntityManager,
  ): Promise<Map<string, StoredEvent & { deliveries: number }>> {
    const rows: Array<StoredEvent & { deliveries: number; key: string }> = await (manager ?? this.dataSource).query(
      `SELECT k.key, e.id, e.type, e.body, e.created_at AS "createdAt",
         (SELECT count(*)::int FROM deliveries d WHERE ${deliveriesOfEvent('d', 'e')} AND d.store_id = e.store_id) AS deliveries
       FROM idempotency_keys k JOIN events e ON e.id = k.event_id AND e.store_id = k.store_id
       WHERE k.store_id = $1 AND k.key = ANY ($2::text[])`,
      [storeId, keys],
    );
    return new Map(rows.map(({ key, ...event }) => [key, event]));
  }

  /** The event holding an idempotency key, with its fan-out count. */
  async findByIdempotencyKey(
    storeId: string,
    key: string,
    manager?: EntityManager,
  ): Promise<(StoredEvent & { deliveries: number }) | null> {
    const rows: Array<StoredEvent & { deliveries: number }> = await (manager ?? this.dataSource).query(
      `SELECT e.id, e.type, e.body, e.created_at AS "createdAt",
         (SELECT count(*)::int FROM deliveries d WHERE ${deliveriesOfEvent('d', 'e')} AND d.store_id = e.store_id) AS deliveries
       FROM idempotency_keys k JOIN events e ON e.id = k.event_id AND e.store_id = k.store_id
       WHERE k.store_id = $1 AND k.key = $2`,
      [storeId, key],
    );
    return rows[0] ?? null;
  }

  async findInStore(storeId: string, id: string): Promise<StoredEvent | null> {
    const rows: StoredEvent[] = await this.dataSource.query(
      `SELECT id, type, body, created_at AS "createdAt" FROM events WHERE id = $1 AND store_id = $2`,
      [id, storeId],
    );
    return rows[0] ?? null;
  }

  /** Forgets idempotency keys past their window (a safety valve for the table's size). */
  async expireIdempotencyKeys(): Promise<void> {
    await this.dataSource.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [
      IDEMPOTENCY_WINDOW_HOURS,
    ]);
  }
}

/** The 10 time characters of an id (`evt_<time><random>`), to give its deliveries' ids the same time. */
function timePart(id: string): string {
  const start = id.indexOf('_') + 1;
  return id.slice(start, start + 10);
}
