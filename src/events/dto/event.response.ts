import { ApiProperty } from '@nestjs/swagger';
import { DeliveryResponse, EnvelopeResponse } from '../../dispatch/publish';
import { EVENT_CATEGORIES, EVENT_TYPES, type EventCategory, type EventType } from '../../catalogue/event-catalogue';

export class PublishedEventResponse {
  @ApiProperty({ example: 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({ enum: EVENT_TYPES, example: 'order.created' })
  type: EventType;

  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' })
  timestamp: string;

  @ApiProperty({ example: 2, description: "Endpoints it fans out to: the store's active endpoints subscribed to the type" })
  deliveries: number;
}

export class PublishedBatchResponse {
  @ApiProperty({ type: PublishedEventResponse, isArray: true, description: 'One entry per event of the batch, in the same order' })
  data: PublishedEventResponse[];
}

/** The envelope as delivered, and the deliveries it fanned out to. */
export class EventResponse extends EnvelopeResponse {
  @ApiProperty({ type: DeliveryResponse, isArray: true })
  deliveries: DeliveryResponse[];
}

export class EventTypeResponse {
  @ApiProperty({ enum: EVENT_TYPES, example: 'order.created' })
  type: EventType;

  @ApiProperty({ enum: EVENT_CATEGORIES, example: 'Orders' })
  category: EventCategory;

  @ApiProperty({ example: 'A new order is placed.' })
  description: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'An example `data`' })
  example: Record<string, unknown>;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The JSON Schema (2020-12) of `data`: every field with its type, limits, description and whether it is required',
  })
  schema: Record<string, unknown>;
}

export class EventTypeListResponse {
  @ApiProperty({ type: EventTypeResponse, isArray: true })
  data: EventTypeResponse[];
}
