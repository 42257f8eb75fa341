import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray } from 'class-validator';
import { EVENT_CATALOGUE, EVENT_TYPES, type EventType } from '../../catalogue/event-catalogue';
import { MAX_BATCH_EVENTS } from '../batch-events';
import { EVENT_DATA_PROPERTY } from './publish-event.dto';

/** One event of a batch: its rules are checked by the publisher, which names a bad event by its index. */
export class BatchEventDto {
  @ApiProperty({ enum: EVENT_TYPES, example: 'order.created' })
  type: EventType;

  @ApiProperty(EVENT_DATA_PROPERTY)
  data: Record<string, unknown>;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x21-\\x7e]{1,255}$',
    example: 'order-1042-created',
    description: 'Works for this event as the `Idempotency-Key` header does for POST /events; unique within the batch',
  })
  idempotencyKey?: string;
}

export class PublishBatchDto {
  @ApiProperty({
    type: BatchEventDto,
    isArray: true,
    minItems: 1,
    maxItems: MAX_BATCH_EVENTS,
    description: `1 to ${MAX_BATCH_EVENTS.toLocaleString('en')} events, published together or not at all`,
    example: [
      { type: 'order.created', data: EVENT_CATALOGUE['order.created'].example, idempotencyKey: 'order-1042-created' },
      { type: 'payment.received', data: EVENT_CATALOGUE['payment.received'].example, idempotencyKey: 'order-1042-paid' },
    ],
  })
  // Only the list itself here: its events are checked one by one by EventPublisher.publishMany, so
  // that every bad event is named by its index in one answer.
  @IsArray({ message: 'events must be an array' })
  events: BatchEventDto[];
}
