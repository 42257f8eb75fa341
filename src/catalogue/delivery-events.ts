import { CountField, EnumField, IdField, ObjectListField, TextField, TimestampField } from './data-shape';

/** `data` of delivery.completed: the platform's delivery shape. */
export class DeliveryEventData {
  @IdField({ description: 'Identifier of the order delivered.', example: 'ord_8c2f41d7' })
  orderId: string;

  @TextField({ description: 'Human-readable order number.', example: 'ORD-1042', maxLength: 64 })
  orderNumber: string;
}

/** One stop of a delivery batch: an order to deliver. */
export class DeliveryStop {
  @IdField({ description: 'Identifier of the order to deliver.', example: 'ord_8c2f41d7' })
  orderId: string;

  @TextField({ description: 'Human-readable order number.', example: 'ORD-1042', maxLength: 64 })
  orderNumber: string;
}

/** At most this many stops in one batch: a day's route, with room to spare. */
export const MAX_BATCH_STOPS = 1000;

/** `data` of delivery.batch_started: a batch of deliveries sent out, with its stops in route order. */
export class DeliveryBatchStartedData {
  @IdField({ description: 'Delivery batch identifier.', example: 'batch_2f6e9a04' })
  batchId: string;

  @CountField({
    description: 'Number of stops in the batch; equals the length of stops.',
    example: 2,
    minimum: 1,
    refine: (value, batch) =>
      Array.isArray(batch.stops) && batch.stops.length !== value ? 'must equal the number of data.stops' : undefined,
  })
  stopCount: number;

  @ObjectListField({
    of: () => DeliveryStop,
    minItems: 1,
    maxItems: MAX_BATCH_STOPS,
    description: `The stops, in route order (1 to ${MAX_BATCH_STOPS}).`,
    example: [
      { orderId: 'ord_8c2f41d7', orderNumber: 'ORD-1042' },
      { orderId: 'ord_91ab7e30', orderNumber: 'ORD-1043' },
    ],
  })
  stops: DeliveryStop[];
}

/** `data` of delivery.batch_completed: every stop of a batch has been attempted. */
export class DeliveryBatchCompletedData {
  @IdField({ description: 'Delivery batch identifier.', example: 'batch_2f6e9a04' })
  batchId: string;

  @CountField({ description: 'Stops delivered.', example: 2 })
  completedStops: number;

  @CountField({ description: 'Stops whose delivery failed (each also sent a delivery.failed).', example: 0 })
  failedStops: number;
}

/** Why a delivery attempt failed. */
export const DELIVERY_FAILURE_REASONS = ['CUSTOMER_UNAVAILABLE', 'ADDRESS_NOT_FOUND', 'REFUSED', 'DAMAGED', 'OTHER'] as const;
export type DeliveryFailureReason = (typeof DELIVERY_FAILURE_REASONS)[number];

/** `data` of delivery.failed: one attempt to deliver an order failed. */
export class DeliveryFailedData {
  @IdField({ description: 'Identifier of the order not delivered.', example: 'ord_8c2f41d7' })
  orderId: string;

  @TextField({ description: 'Human-readable order number.', example: 'ORD-1042', maxLength: 64 })
  orderNumber: string;

  @EnumField({ values: DELIVERY_FAILURE_REASONS, description: 'Why the attempt failed.', example: 'CUSTOMER_UNAVAILABLE' })
  reason: DeliveryFailureReason;

  @CountField({ description: 'Which attempt at this order failed, from 1.', example: 1, minimum: 1 })
  attempt: number;

  @TextField({ description: "The courier's note.", example: 'Nobody at home, left a notice', maxLength: 500, optional: true })
  note?: string;

  @TimestampField({
    description: 'When the next attempt is planned; absent when no further attempt is planned.',
    example: '2026-11-23T09:00:00.000Z',
    optional: true,
  })
  nextAttemptAt?: string;
}
