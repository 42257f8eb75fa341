import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsObject } from 'class-validator';
import { EVENT_TYPES, PUBLISHABLE_EVENT_TYPES, type EventType } from '../../catalogue/event-catalogue';
import { unknownEventTypeMessage } from '../../catalogue/unknown-event-type';

/** The `data` field as documented wherever an event is published. */
export const EVENT_DATA_PROPERTY = {
  type: 'object',
  additionalProperties: true,
  description: "The event's data; its shape depends on `type` (see GET /event-types)",
  example: { id: 'ord_8c2f41d7', orderNumber: 'ORD-1042', status: 'PENDING', total: 4998, currency: 'EUR' },
} as const;

export class PublishEventDto {
  @ApiProperty({
    enum: PUBLISHABLE_EVENT_TYPES,
    example: 'order.created',
    description: 'Any type of GET /event-types but the webhook.* ones, which Hookline alone publishes (400)',
  })
  // Every catalogue type passes here, so that a webhook.* type is refused with its own message (EventPublisher).
  @IsIn(EVENT_TYPES, { message: ({ value }) => unknownEventTypeMessage('type', value) })
  type: EventType;

  @ApiProperty(EVENT_DATA_PROPERTY)
  @IsObject({ message: 'data must be an object' })
  data: Record<string, unknown>;
}
