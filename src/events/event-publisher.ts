import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { PgNotifier } from '../database/pg-notifier';
import { DeliveryRepository } from '../dispatch/delivery.repository';
import { DELIVERIES_CHANNEL } from '../dispatch/dispatcher';
import { Metrics } from '../observability/metrics';
import { WebhookRepository } from '../webhooks/webhook.repository';
import { EventData, EventType, isEventType, validateEventData } from './catalogue/event-catalogue';
import { buildEnvelope } from './envelope';
import { EventRepository } from './event.repository';

export interface PublishOptions {
  /**
   * The caller's transaction. The event and its deliveries are written in it, so they exist if
   * and only if the caller commits (transactional outbox).
   */
  manager?: EntityManager;
  /** A repeat with the same key within 24 hours returns the first event and delivers nothing. */
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

/** `data` does not match its event type's shape. */
export class InvalidEventDataError extends BadRequestException {
  constructor(readonly problems: string[]) {
    super(problems);
  }
}

/**
 * How the platform's modules publish events (CONTRACT §6). Inject it and call
 * `publish(storeId, 'order.created', data, { manager })`: the payload is typed per event type, so
 * a wrong one does not compile, and it is checked again at run time.
 */
@Injectable()
export class EventPublisher {
  constructor(
    private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventRepository,
    private readonly webhooks: WebhookRepository,
    private readonly deliveries: DeliveryRepository,
    private readonly notifier: PgNotifier,
    private readonly metrics: Metrics,
  ) {}

  async publish<T extends EventType>(storeId: string, type: T, data: EventData<T>, options: PublishOptions = {}): Promise<PublishedEvent> {
    if (!isEventType(type)) throw new BadRequestException([`type must be one of the event types of GET /event-types`]);
    const problems = validateEventData(type, data);
    if (problems.length > 0) throw new InvalidEventDataError(problems);

    const write = (manager: EntityManager): Promise<PublishedEvent> => this.write(manager, storeId, type, data, options.idempotencyKey);
    try {
      return options.manager ? await write(options.manager) : await this.dataSource.transaction(write);
    } catch (error) {
      if ((error as { code?: string }).code === '23503') throw new NotFoundException(`Store ${storeId} not found`);
      throw error;
    }
  }

  private async write<T extends EventType>(
    manager: EntityManager,
    storeId: string,
    type: T,
    data: EventData<T>,
    idempotencyKey: string | undefined,
  ): Promise<PublishedEvent> {
    const { envelope, body } = buildEnvelope(type, data);
    const inserted = await this.events.insert(manager, {
      id: envelope.id,
      storeId,
      type,
      body,
      createdAt: new Date(envelope.timestamp),
      idempotencyKey,
    });
    if (!inserted) {
      const first = (await this.events.findByIdempotencyKey(manager, storeId, idempotencyKey!))!;
      return { id: first.id, type: first.type as T, timestamp: first.createdAt.toISOString(), deliveries: first.deliveries, duplicate: true };
    }
    const subscribers = await this.webhooks.subscribers(storeId, type, manager);
    await this.deliveries.createForEvent(manager, { storeId, eventId: envelope.id, eventType: type }, subscribers, this.config.retryScheduleMs[0]);
    // Delivered to the workers on commit, and only if the transaction commits.
    if (subscribers.length > 0) await this.notifier.notify(DELIVERIES_CHANNEL, '', manager);
    this.metrics.eventsPublished.inc();
    return { id: envelope.id, type, timestamp: envelope.timestamp, deliveries: subscribers.length, duplicate: false };
  }
}
