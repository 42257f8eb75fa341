import { isDeepStrictEqual } from 'node:util';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { isForeignKeyViolation } from '../common/database-errors';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../observability/metrics';
import { Tracing } from '../observability/tracing';
import { EventData, EventType, isEventType, isOperationalEventType, validateEventData } from '../catalogue/event-catalogue';
import { batchProblems } from './batch-events';
import { buildEnvelope, type Envelope } from '../catalogue/envelope';
import { EventError } from './event.errors';
import { EventRepository, type NewEvent } from '../dispatch/publish';
import { PublishBatcher } from '../dispatch/publish';

export interface PublishOptions {
  /**
   * The caller's transaction. The event and its deliveries are written in it, so they exist if
   * and only if the caller commits (transactional outbox).
   */
  manager?: EntityManager;
  /**
   * A repeat with the same key, type and data within 24 hours returns the first event and delivers
   * nothing; the same key with another type or data is refused (`IdempotencyKeyReused`).
   */
  idempotencyKey?: string;
}

export interface PublishManyOptions {
  /** The caller's transaction: the whole batch is published if and only if the caller commits. */
  manager?: EntityManager;
}

/** One event of a batch, typed per event type: `data` must be the shape of `type`. */
export type BatchEvent<T extends EventType = EventType> = {
  [K in T]: {
    type: K;
    data: EventData<K>;
    /** Works for this event as {@link PublishOptions.idempotencyKey} does for one. */
    idempotencyKey?: string;
  };
}[T];

export interface PublishedEvent {
  id: string;
  type: EventType;
  timestamp: string;
  /** Endpoints it fans out to: the store's active endpoints subscribed to `type`. */
  deliveries: number;
  /** True when an Idempotency-Key matched an earlier event, which is what is returned. */
  duplicate: boolean;
}

/**
 * How the platform's modules publish events. Inject it and call
 * `publish(storeId, 'order.created', data, { manager })`: the payload is typed per event type, so
 * a wrong one does not compile, and it is checked again at run time. It throws an `EventError`
 * (catch it by class and `code`: `UnknownType`, `ReservedType` (Hookline's own webhook.* types), `InvalidData`, `InvalidBatch`, `StoreNotFound`,
 * `IdempotencyKeyReused`), never an HTTP exception. The event, its deliveries
 * and the workers' wake-up are one statement (EventRepository.publish); `publishMany` does the
 * same for up to 1,000 events at once.
 */
@Injectable()
export class EventPublisher {
  private readonly logger = new Logger(EventPublisher.name);
  /** LOG_LEVEL=debug or trace: a line per event (read once; below it a publish costs nothing more). */
  private readonly logsEvents: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly events: EventRepository,
    private readonly batcher: PublishBatcher,
    private readonly metrics: Metrics,
    private readonly tracing: Tracing,
  ) {
    this.logsEvents = config.logLevel === 'debug' || config.logLevel === 'trace';
  }

  async publish<T extends EventType>(storeId: string, type: T, data: EventData<T>, options: PublishOptions = {}): Promise<PublishedEvent> {
    // With tracing on, a span (a child of the caller's active one) whose context the event keeps for its attempts.
    if (!this.tracing.enabled) return this.publishOne(storeId, type, data, options);
    const span = this.tracing.startPublish(storeId, [type])!;
    try {
      const published = await this.publishOne(storeId, type, data, options, span.traceparent);
      span.end({ deliveries: published.deliveries, duplicate: published.duplicate, eventId: published.id });
      return published;
    } catch (error) {
      span.fail(error);
      throw error;
    }
  }

  private async publishOne<T extends EventType>(
    storeId: string,
    type: T,
    data: EventData<T>,
    options: PublishOptions,
    traceparent?: string,
  ): Promise<PublishedEvent> {
    if (!isEventType(type)) throw EventError.unknownType(type);
    if (isOperationalEventType(type)) throw EventError.reservedType(type);
    const problems = validateEventData(type, data);
    if (problems.length > 0) throw EventError.invalidData(problems);

    const { envelope, body } = buildEnvelope(type, data);
    const event: NewEvent = {
      id: envelope.id,
      storeId,
      type,
      body,
      createdAt: new Date(envelope.timestamp),
      idempotencyKey: options.idempotencyKey,
      traceparent,
    };
    const firstDelayMs = this.config.retryScheduleMs[0];
    let published: { deliveries: number } | null;
    try {
      // On its own, an event joins the next group commit; in a transaction, or with a key, it is one statement.
      published =
        options.manager || options.idempotencyKey !== undefined
          ? await this.events.publish(event, firstDelayMs, options.manager)
          : { deliveries: await this.batcher.publish(event) };
    } catch (error) {
      // The only foreign key the publish statement can break is the event's store.
      if (isForeignKeyViolation(error)) throw EventError.storeNotFound(storeId);
      throw error;
    }
    if (!published) {
      const first = (await this.events.findByIdempotencyKey(storeId, options.idempotencyKey!, options.manager))!;
      if (!isSameRequest(first.body, envelope)) throw EventError.idempotencyKeyReused(options.idempotencyKey!, first.id);
      return {
        id: first.id,
        type: first.type as T,
        timestamp: first.createdAt.toISOString(),
        deliveries: first.deliveries,
        duplicate: true,
      };
    }
    this.metrics.eventsPublished.inc();
    if (this.logsEvents) this.logger.debug(`event ${envelope.id} (${type}) of ${storeId} published to ${published.deliveries} endpoint(s)`);
    return { id: envelope.id, type, timestamp: envelope.timestamp, deliveries: published.deliveries, duplicate: false };
  }

  /**
   * Publishes up to 1,000 events of one store together: all of them or, if any is invalid (an
   * `EventError` `InvalidBatch` naming each bad one by its index) or reuses an Idempotency-Key for
   * other data (`IdempotencyKeyReused`), none. The events and their deliveries are written in a
   * few set-based statements, not one per event (EventRepository.publishMany). Answers one entry
   * per event, in the same order; an event whose `idempotencyKey` matched an earlier event answers
   * that event, marked `duplicate`, and delivers nothing again.
   */
  async publishMany(storeId: string, events: readonly BatchEvent[], options: PublishManyOptions = {}): Promise<PublishedEvent[]> {
    if (!this.tracing.enabled) return this.publishBatch(storeId, events, options);
    // One span for the batch (events that are not an array are refused below, under it).
    const types = Array.isArray(events)
      ? (events as readonly unknown[]).map((event) => String((event as { type?: unknown } | null)?.type))
      : [];
    const span = this.tracing.startPublish(storeId, types)!;
    try {
      const answers = await this.publishBatch(storeId, events, options, span.traceparent);
      span.end({ deliveries: answers.reduce((sum, answer) => sum + (answer.duplicate ? 0 : answer.deliveries), 0) });
      return answers;
    } catch (error) {
      span.fail(error);
      throw error;
    }
  }

  private async publishBatch(
    storeId: string,
    events: readonly BatchEvent[],
    options: PublishManyOptions,
    traceparent?: string,
  ): Promise<PublishedEvent[]> {
    const problems = batchProblems(events);
    if (problems.length > 0) throw EventError.invalidBatch(problems);

    // One time for the batch: its events are published together, in one transaction.
    const at = new Date();
    const built = events.map((event) => buildEnvelope(event.type, event.data, at));
    const rows: NewEvent[] = built.map(({ envelope, body }, index) => ({
      id: envelope.id,
      storeId,
      type: envelope.type,
      body,
      createdAt: at,
      idempotencyKey: events[index].idempotencyKey,
      traceparent,
    }));
    const keys = rows.flatMap((row) => (row.idempotencyKey === undefined ? [] : [row.idempotencyKey]));
    const firstDelayMs = this.config.retryScheduleMs[0];
    let counts: Map<string, number>;
    let replays = new Map<string, PublishedEvent>();
    try {
      if (keys.length === 0) {
        // One statement: atomic on its own, in the caller's transaction or not.
        counts = options.manager
          ? (await this.events.publishMany(rows, firstDelayMs, undefined, options.manager)).counts
          : await this.batcher.publishAtOnce(rows);
      } else {
        // Several statements, and a key reused for other data must undo the whole batch: a
        // transaction of its own, or a savepoint in the caller's.
        ({ counts, replays } = await (options.manager ?? this.dataSource.manager).transaction(async (manager) => {
          await this.events.releaseExpiredKeys(storeId, keys, manager);
          const published = await this.events.publishMany(rows, firstDelayMs, undefined, manager);
          return { counts: published.counts, replays: await this.replaysOf(storeId, rows, built, published.skipped, manager) };
        }));
      }
    } catch (error) {
      if (isForeignKeyViolation(error)) throw EventError.storeNotFound(storeId);
      throw error;
    }
    const answers = rows.map(
      (row, index): PublishedEvent =>
        replays.get(row.id) ?? {
          id: row.id,
          type: events[index].type,
          timestamp: built[index].envelope.timestamp,
          deliveries: counts.get(row.id) ?? 0,
          duplicate: false,
        },
    );
    const published = rows.length - replays.size;
    this.metrics.eventsPublished.inc(published);
    if (this.logsEvents)
      this.logger.debug(`batch of ${rows.length} events of ${storeId}: ${published} published, ${replays.size} replayed`);
    return answers;
  }

  /**
   * The answers of the events a batch did not write because their key was taken, by event id: the
   * first event of each key. Throws when any of them asked for another type or data.
   */
  private async replaysOf(
    storeId: string,
    rows: NewEvent[],
    built: Array<{ envelope: Envelope }>,
    skipped: string[],
    manager: EntityManager,
  ): Promise<Map<string, PublishedEvent>> {
    const replays = new Map<string, PublishedEvent>();
    if (skipped.length === 0) return replays;
    const skippedIds = new Set(skipped);
    const indexes = rows.flatMap((row, index) => (skippedIds.has(row.id) ? [index] : []));
    const firsts = await this.events.findByIdempotencyKeys(
      storeId,
      indexes.map((index) => rows[index].idempotencyKey!),
      manager,
    );
    const reused: Array<{ index: number; key: string; firstEventId: string }> = [];
    for (const index of indexes) {
      const key = rows[index].idempotencyKey!;
      const first = firsts.get(key);
      // Skipped for its key, so an event holds it; gone only if deleted since, which nothing does.
      if (!first) throw new Error(`no event holds Idempotency-Key ${JSON.stringify(key)} of events[${index}]`);
      if (!isSameRequest(first.body, built[index].envelope)) reused.push({ index, key, firstEventId: first.id });
      replays.set(rows[index].id, {
        id: first.id,
        type: first.type as EventType,
        timestamp: first.createdAt.toISOString(),
        deliveries: first.deliveries,
        duplicate: true,
      });
    }
    if (reused.length > 0) throw EventError.batchIdempotencyKeysReused(reused);
    return replays;
  }
}

/**
 * Whether a repeat asks for the same event as the first: the same type and the same data as JSON
 * (key order aside), compared on the stored envelope, which holds both exactly as published.
 */
function isSameRequest(firstBody: string, repeat: Envelope): boolean {
  const first = JSON.parse(firstBody) as Envelope;
  return first.type === repeat.type && isDeepStrictEqual(first.data, JSON.parse(JSON.stringify(repeat.data)));
}
