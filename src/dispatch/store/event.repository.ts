import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { poolSql, typeormSql, type Sql } from '../../database/sql';
import { SqlPool } from '../../database/sql-pool';
import { DELIVERIES_CHANNEL } from './deliveries-channel';
import { slotsJson, type HandOff } from './delivery.repository';
import {
  EVENTS_BY_IDEMPOTENCY_KEYS,
  EXPIRE_IDEMPOTENCY_KEY,
  EXPIRE_IDEMPOTENCY_KEYS,
  EXPIRE_IDEMPOTENCY_KEYS_OF_BATCH,
  FIND_EVENT,
  INSERT_EVENT,
  PUBLISH,
  PUBLISH_MANY,
  PUBLISH_MANY_HAND_OFF,
  PUBLISH_MANY_KEYS,
  PUBLISH_MANY_KEYS_HAND_OFF,
} from './event.sql';

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

/**
 * Events and their fan-out; the statements are in `event.sql.ts`. Each method runs in the
 * caller's transaction when given its `manager`, and otherwise on its own.
 */
@Injectable()
export class EventRepository {
  private readonly onPool: Sql;
  private readonly onDataSource: Sql;

  constructor(@InjectDataSource() dataSource: DataSource, pool: SqlPool) {
    this.onPool = poolSql(pool);
    this.onDataSource = typeormSql(dataSource);
  }

  /** Publishing goes through the pool's prepared statements; everything else through TypeORM. */
  private sql(manager: EntityManager | undefined, publishing = false): Sql {
    if (manager) return typeormSql(manager);
    return publishing ? this.onPool : this.onDataSource;
  }

  /**
   * Publishes `event` (see {@link PUBLISH}); in the caller's transaction when `manager` is given.
   * Returns null when the Idempotency-Key belongs to an event of the last 24 hours.
   */
  async publish(event: NewEvent, firstDelayMs: number, manager?: EntityManager): Promise<{ deliveries: number } | null> {
    if (event.idempotencyKey !== undefined) await this.expireIdempotencyKey(event.storeId, event.idempotencyKey, manager);
    const [row] = await this.sql(manager, true).rows<{ inserted: number; deliveries: number }>(PUBLISH, [
      event.id,
      event.storeId,
      event.type,
      event.body,
      event.idempotencyKey ?? null,
      event.createdAt.toISOString(),
      timePart(event.id),
      firstDelayMs,
      event.traceparent ?? null,
      DELIVERIES_CHANNEL,
    ]);
    return row.inserted === 1 ? { deliveries: row.deliveries } : null;
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
    const statement = withKeys
      ? handOff
        ? PUBLISH_MANY_KEYS_HAND_OFF
        : PUBLISH_MANY_KEYS
      : handOff
        ? PUBLISH_MANY_HAND_OFF
        : PUBLISH_MANY;
    const values: unknown[] = [JSON.stringify(rows), firstDelayMs, DELIVERIES_CHANNEL];
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
    const [{ counts, inserted, skipped, leased }] = await this.sql(manager, true).rows<Row>(statement, values);
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
    await typeormSql(manager).rows(INSERT_EVENT, [
      event.id,
      event.storeId,
      event.type,
      event.body,
      event.createdAt.toISOString(),
      event.traceparent ?? null,
    ]);
  }

  /** See {@link EXPIRE_IDEMPOTENCY_KEY}. */
  private async expireIdempotencyKey(storeId: string, key: string, manager?: EntityManager): Promise<void> {
    await this.sql(manager).rows(EXPIRE_IDEMPOTENCY_KEY, [storeId, key, IDEMPOTENCY_WINDOW_HOURS]);
  }

  /** {@link expireIdempotencyKey} for the keys of a batch, in one statement. */
  async releaseExpiredKeys(storeId: string, keys: string[], manager?: EntityManager): Promise<void> {
    await this.sql(manager).rows(EXPIRE_IDEMPOTENCY_KEYS_OF_BATCH, [storeId, keys, IDEMPOTENCY_WINDOW_HOURS]);
  }

  /** The events holding these idempotency keys, with their fan-out counts, by key. */
  async findByIdempotencyKeys(
    storeId: string,
    keys: string[],
    manager?: EntityManager,
  ): Promise<Map<string, StoredEvent & { deliveries: number }>> {
    const rows = await this.sql(manager).rows<StoredEvent & { deliveries: number; key: string }>(EVENTS_BY_IDEMPOTENCY_KEYS, [
      storeId,
      keys,
    ]);
    return new Map(rows.map(({ key, ...event }) => [key, event]));
  }

  /** The event holding an idempotency key, with its fan-out count. */
  async findByIdempotencyKey(
    storeId: string,
    key: string,
    manager?: EntityManager,
  ): Promise<(StoredEvent & { deliveries: number }) | null> {
    return (await this.findByIdempotencyKeys(storeId, [key], manager)).get(key) ?? null;
  }

  async findInStore(storeId: string, id: string): Promise<StoredEvent | null> {
    const [row] = await this.onDataSource.rows<StoredEvent>(FIND_EVENT, [id, storeId]);
    return row ?? null;
  }

  /** Forgets idempotency keys past their window (a safety valve for the table's size). */
  async expireIdempotencyKeys(): Promise<void> {
    await this.onDataSource.rows(EXPIRE_IDEMPOTENCY_KEYS, [IDEMPOTENCY_WINDOW_HOURS]);
  }
}

/** The 10 time characters of an id (`evt_<time><random>`), to give its deliveries' ids the same time. */
function timePart(id: string): string {
  const start = id.indexOf('_') + 1;
  return id.slice(start, start + 10);
}
