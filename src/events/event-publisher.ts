import { isDeepStrictEqual } from 'node:util';
import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { isForeignKeyViolation } from '../common/database-errors';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../observability/metrics';
import { EventData, EventType, isEventType, validateEventData } from '../catalogue/event-catalogue';
import { buildEnvelope, type Envelope } from './envelope';
import { EventError } from './event.errors';
import { EventRepository } from '../dispatch/event.repository';
import { PublishBatcher } from '../dispatch/publish-batcher';

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
 * (catch it by class and `code`: `UnknownType`, `InvalidData`, `StoreNotFound`,
 * `IdempotencyKeyReused`), never an HTTP exception. The event, its deliveries
 * and the workers' wake-up are one statement (EventRepository.publish).
 */
@Injectable()
export class EventPublisher {
  private readonly logger = new Logger(EventPublisher.name);
  /** LOG_LEVEL=debug or trace: a line per event (read once; below it a publish costs nothing more). */
  private readonly logsEvents: boolean;

  constructor(
    private readonly config: AppConfig,
    private readonly events: EventRepository,
    private readonly batcher: PublishBatcher,
    private readonly metrics: Metrics,
  ) {
    this.logsEvents = config.logLevel === 'debug' || config.logLevel === 'trace';
  }

  async publish<T extends EventType>(storeId: string, type: T, data: EventData<T>, options: PublishOptions = {}): Promise<PublishedEvent> {
    if (!isEventType(type)) throw EventError.unknownType(type);
    const problems = validateEventData(type, data);
    if (problems.length > 0) throw EventError.invalidData(problems);

    const { envelope, body } = buildEnvelope(type, data);
    const event = { id: envelope.id, storeId, type, body, createdAt: new Date(envelope.timestamp), idempotencyKey: options.idempotencyKey };
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
}

/**
 * Whether a repeat asks for the same event as the first: the same type and the same data as JSON
 * (key order aside), compared on the stored envelope, which holds both exactly as published.
 */
function isSameRequest(firstBody: string, repeat: Envelope): boolean {
  const first = JSON.parse(firstBody) as Envelope;
  return first.type === repeat.type && isDeepStrictEqual(first.data, JSON.parse(JSON.stringify(repeat.data)));
}
