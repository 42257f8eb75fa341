import { AmountField, CurrencyField, EnumField, IdField, TextField } from './data-shape';

/** Every status an order can have; `status` and `previousStatus` take one of these. */
export const ORDER_STATUSES = ['PENDING', 'CONFIRMED', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'COMPLETED', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** `data` of order.created, order.updated and order.completed: the platform's order shape. */
export class OrderEventData {
  @IdField({ description: 'Order identifier.', example: 'ord_8c2f41d7' })
  id: string;

  @TextField({ description: 'Human-readable order number.', example: 'ORD-1042', maxLength: 64 })
  orderNumber: string;

  @EnumField({
    values: ORDER_STATUSES,
    description: 'Order status after the event: PENDING on order.created, COMPLETED on order.completed.',
    example: 'PENDING',
  })
  status: OrderStatus;

  @AmountField({ description: 'Order total in minor currency units (4998 = 49.98).', example: 4998 })
  total: number;

  @CurrencyField()
  currency: string;
}

/** `data` of order.cancelled: the order (status CANCELLED) and, when known, why. */
export class OrderCancelledData extends OrderEventData {
  @TextField({
    description: 'Why the order was cancelled, as given by the store or the customer.',
    example: 'Customer asked to cancel',
    maxLength: 500,
    optional: true,
  })
  reason?: string;
}

/** `data` of order.status_changed: the order with its new status, and the one before. */
export class OrderStatusChangedData extends OrderEventData {
  @EnumField({
    values: ORDER_STATUSES,
    description: 'Order status before the change; never equal to status.',
    example: 'CONFIRMED',
    refine: (value, order) => (value === order.status ? 'must differ from data.status' : undefined),
  })
  previousStatus: OrderStatus;
}
