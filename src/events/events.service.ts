import { Injectable } from '@nestjs/common';
import { DeliveryLog } from '../dispatch/publish';
import { DeliveryResponse } from '../dispatch/publish';
import { describeCatalogue, describeEventType, type EventData, type EventType, isEventType } from '../catalogue/event-catalogue';
import type { EventResponse, EventTypeListResponse, EventTypeResponse } from './dto/event.response';
import type { Envelope } from '../catalogue/envelope';
import { EventError } from './event.errors';
import { type BatchEvent, EventPublisher, type PublishedEvent } from './event-publisher';
import { EventRepository } from '../dispatch/publish';

@Injectable()
export class EventsService {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly events: EventRepository,
    private readonly deliveries: DeliveryLog,
  ) {}

  /** POST /events: the data is checked against its type at run time by the publisher. */
  publish(storeId: string, type: EventType, data: unknown, idempotencyKey?: string): Promise<PublishedEvent> {
    return this.publisher.publish(storeId, type, data as EventData<EventType>, { idempotencyKey });
  }

  /** POST /events/batch: each event is checked by the publisher, which names a bad one by its index. */
  publishMany(storeId: string, events: unknown[]): Promise<PublishedEvent[]> {
    return this.publisher.publishMany(storeId, events as BatchEvent[]);
  }

  /**
   * With `among` (a portal session's endpoints): only the deliveries to those, and an event that
   * reached none of them is not found.
   */
  async get(storeId: string, id: string, among?: readonly string[]): Promise<EventResponse> {
    const event = await this.events.findInStore(storeId, id);
    if (!event) throw EventError.notFound(id);
    const envelope = JSON.parse(event.body) as Envelope<string, Record<string, unknown>>;
    let deliveries = await this.deliveries.listForEvent(storeId, id);
    if (among) {
      deliveries = deliveries.filter((row) => among.includes(row.webhookId));
      if (deliveries.length === 0) throw EventError.notFound(id);
    }
    return { ...envelope, deliveries: deliveries.map((row) => DeliveryResponse.of(row)) };
  }

  eventTypes(): EventTypeListResponse {
    return { data: describeCatalogue() as unknown as EventTypeListResponse['data'] };
  }

  /** GET /event-types/:type: the type with the JSON Schema of its data. */
  eventType(type: string): EventTypeResponse {
    if (!isEventType(type)) throw EventError.typeNotFound(type);
    return describeEventType(type) as unknown as EventTypeResponse;
  }
}
