import { CustomerEventData } from './customer-events';
import { validateShape, type DataClass } from './data-shape';
import { DeliveryBatchCompletedData, DeliveryBatchStartedData, DeliveryEventData, DeliveryFailedData } from './delivery-events';
import { StockLowData, StockUpdatedData } from './inventory-events';
import { OrderCancelledData, OrderEventData, OrderStatusChangedData } from './order-events';
import { PaymentEventData, PaymentRefundedData } from './payment-events';
import { compileSchema, JSON_SCHEMA_DIALECT, jsonSchemaOf, type JsonSchema, schemaProblems } from './event-schema';
import { ProductEventData } from './product-events';
import { TestEventData } from './test-event';
import { WebhookDeliveryFailedData, WebhookDisabledData } from './webhook-events';

export { TestEventData };

/**
 * The categories, in catalogue order: six of the platform's events, and `Webhooks`, Hookline's
 * own operational events about a store's endpoints.
 */
export const EVENT_CATEGORIES = ['Orders', 'Payments', 'Products', 'Inventory', 'Customers', 'Deliveries', 'Webhooks'] as const;
export type EventCategory = (typeof EVENT_CATEGORIES)[number];

/**
 * The one map from event type to the shape of its `data`. Everything typed per event type
 * (`EventPublisher.publish<T>(storeId, type: T, data: EventData<T>)`) goes through it, so a wrong
 * payload is a compile error.
 */
export interface EventDataMap {
  'order.created': OrderEventData;
  'order.updated': OrderEventData;
  'order.cancelled': OrderCancelledData;
  'order.completed': OrderEventData;
  'order.status_changed': OrderStatusChangedData;
  'payment.received': PaymentEventData;
  'payment.refunded': PaymentRefundedData;
  'product.created': ProductEventData;
  'product.updated': ProductEventData;
  'product.deleted': ProductEventData;
  'stock.low': StockLowData;
  'stock.updated': StockUpdatedData;
  'customer.created': CustomerEventData;
  'customer.updated': CustomerEventData;
  'delivery.batch_started': DeliveryBatchStartedData;
  'delivery.batch_completed': DeliveryBatchCompletedData;
  'delivery.completed': DeliveryEventData;
  'delivery.failed': DeliveryFailedData;
  'webhook.disabled': WebhookDisabledData;
  'webhook.delivery_failed': WebhookDeliveryFailedData;
}

/** One of the 20 subscribable event types. */
export type EventType = keyof EventDataMap;
export type EventData<T extends EventType> = EventDataMap[T];

export interface EventDefinition<T extends EventType = EventType> {
  readonly type: T;
  readonly category: EventCategory;
  /** When the event fires ("Fires when"). */
  readonly description: string;
  /** The class declaring the `data` shape: validation, OpenAPI schema and {@link describeCatalogue}. */
  readonly dataClass: DataClass<EventData<T>>;
  readonly example: EventData<T>;
}

const order: OrderEventData = { id: 'ord_8c2f41d7', orderNumber: 'ORD-1042', status: 'PENDING', total: 4998, currency: 'EUR' };
const payment: PaymentEventData = {
  orderId: 'ord_8c2f41d7',
  orderNumber: 'ORD-1042',
  amount: 4998,
  currency: 'EUR',
  paymentMethod: 'CARD',
  status: 'CAPTURED',
};
const product: ProductEventData = {
  id: 'prod_3b9e62a1',
  name: 'Organic cotton T-shirt, black, M',
  sku: 'TSHIRT-BLK-M',
  price: 2499,
  status: 'ACTIVE',
};
const customer: CustomerEventData = { id: 'cus_5a7d0c13', email: 'ana.novak@example.com', firstName: 'Ana', lastName: 'Novak' };

/**
 * The catalogue: the 20 event types (the platform's 18 and Hookline's 2 operational ones) in catalogue order, each with its category, when it
 * fires, its `data` class and an example `data`. The mapped type makes leaving one out, or giving
 * one the wrong class or example, a compile error.
 */
export const EVENT_CATALOGUE: { readonly [T in EventType]: EventDefinition<T> } = deepFreeze({
  'order.created': {
    type: 'order.created',
    category: 'Orders',
    description: 'A new order is placed.',
    dataClass: OrderEventData,
    example: order,
  },
  'order.updated': {
    type: 'order.updated',
    category: 'Orders',
    description: 'Order details are modified.',
    dataClass: OrderEventData,
    example: { ...order, status: 'CONFIRMED', total: 5497 },
  },
  'order.cancelled': {
    type: 'order.cancelled',
    category: 'Orders',
    description: 'An order is cancelled.',
    dataClass: OrderCancelledData,
    example: { ...order, status: 'CANCELLED', reason: 'Customer asked to cancel' },
  },
  'order.completed': {
    type: 'order.completed',
    category: 'Orders',
    description: 'An order is marked completed.',
    dataClass: OrderEventData,
    example: { ...order, status: 'COMPLETED' },
  },
  'order.status_changed': {
    type: 'order.status_changed',
    category: 'Orders',
    description: 'Any change of order status.',
    dataClass: OrderStatusChangedData,
    example: { ...order, status: 'SHIPPED', previousStatus: 'PROCESSING' },
  },
  'payment.received': {
    type: 'payment.received',
    category: 'Payments',
    description: 'Payment is captured or cash on delivery is collected.',
    dataClass: PaymentEventData,
    example: payment,
  },
  'payment.refunded': {
    type: 'payment.refunded',
    category: 'Payments',
    description: 'A payment is refunded or cancelled.',
    dataClass: PaymentRefundedData,
    example: { ...payment, status: 'PARTIALLY_REFUNDED', refundedAmount: 1999, reason: 'Item returned' },
  },
  'product.created': {
    type: 'product.created',
    category: 'Products',
    description: 'A new product is added.',
    dataClass: ProductEventData,
    example: product,
  },
  'product.updated': {
    type: 'product.updated',
    category: 'Products',
    description: 'Product details change.',
    dataClass: ProductEventData,
    example: { ...product, price: 1999 },
  },
  'product.deleted': {
    type: 'product.deleted',
    category: 'Products',
    description: 'A product is deleted.',
    dataClass: ProductEventData,
    example: { ...product, status: 'ARCHIVED' },
  },
  'stock.low': {
    type: 'stock.low',
    category: 'Inventory',
    description: 'Stock falls below the threshold.',
    dataClass: StockLowData,
    example: { productId: product.id, sku: product.sku, name: product.name, quantity: 3, threshold: 5 },
  },
  'stock.updated': {
    type: 'stock.updated',
    category: 'Inventory',
    description: 'Stock quantity changes.',
    dataClass: StockUpdatedData,
    example: { productId: product.id, sku: product.sku, previousQuantity: 12, quantity: 10 },
  },
  'customer.created': {
    type: 'customer.created',
    category: 'Customers',
    description: 'A new customer registers.',
    dataClass: CustomerEventData,
    example: customer,
  },
  'customer.updated': {
    type: 'customer.updated',
    category: 'Customers',
    description: 'Customer information is updated.',
    dataClass: CustomerEventData,
    example: { ...customer, phone: '+38640123456' },
  },
  'delivery.batch_started': {
    type: 'delivery.batch_started',
    category: 'Deliveries',
    description: 'A batch of deliveries is dispatched.',
    dataClass: DeliveryBatchStartedData,
    example: {
      batchId: 'batch_2f6e9a04',
      stopCount: 2,
      stops: [
        { orderId: 'ord_8c2f41d7', orderNumber: 'ORD-1042' },
        { orderId: 'ord_91ab7e30', orderNumber: 'ORD-1043' },
      ],
    },
  },
  'delivery.batch_completed': {
    type: 'delivery.batch_completed',
    category: 'Deliveries',
    description: 'All stops of a batch are completed.',
    dataClass: DeliveryBatchCompletedData,
    example: { batchId: 'batch_2f6e9a04', completedStops: 1, failedStops: 1 },
  },
  'delivery.completed': {
    type: 'delivery.completed',
    category: 'Deliveries',
    description: 'An individual delivery is completed.',
    dataClass: DeliveryEventData,
    example: { orderId: 'ord_8c2f41d7', orderNumber: 'ORD-1042' },
  },
  'delivery.failed': {
    type: 'delivery.failed',
    category: 'Deliveries',
    description: 'A delivery attempt fails.',
    dataClass: DeliveryFailedData,
    example: {
      orderId: 'ord_91ab7e30',
      orderNumber: 'ORD-1043',
      reason: 'CUSTOMER_UNAVAILABLE',
      attempt: 1,
      note: 'Nobody at home, left a notice',
      nextAttemptAt: '2026-11-23T09:00:00.000Z',
    },
  },
  'webhook.disabled': {
    type: 'webhook.disabled',
    category: 'Webhooks',
    description:
      'Hookline disables one of the store’s endpoints: it has been failing for ENDPOINT_DISABLE_AFTER_MS, or it answered 410 Gone. Not sent to the endpoint disabled. Published by Hookline only.',
    dataClass: WebhookDisabledData,
    example: {
      webhookId: 'wh_01jd3v8k2m9q4r7s6t5v4w3x2y',
      name: 'ERP order sync',
      url: 'https://erp.example.com/hooks/orders',
      reason: 'failing',
      disabledAt: '2026-11-23T09:00:00.000Z',
    },
  },
  'webhook.delivery_failed': {
    type: 'webhook.delivery_failed',
    category: 'Webhooks',
    description:
      'A delivery to one of the store’s endpoints ends failed after its last attempt (or a 410 Gone). Never sent for a delivery of webhook.* events. Published by Hookline only.',
    dataClass: WebhookDeliveryFailedData,
    example: {
      deliveryId: 'del_01jd3v9a7c4e2g6h',
      webhookId: 'wh_01jd3v8k2m9q4r7s6t5v4w3x2y',
      eventId: 'evt_01jd3v9a7c4e2g6h',
      eventType: 'order.created',
      attemptCount: 3,
      lastStatusCode: 500,
      lastError: 'HTTP 500',
    },
  },
});

/**
 * Hookline's own events about a store's endpoints: endpoints subscribe to them like to any other,
 * but only Hookline publishes them (POST /events and EventPublisher refuse them), and a failed
 * delivery of one of them emits nothing, so a failing endpoint cannot start a loop.
 */
export const OPERATIONAL_EVENT_TYPES = ['webhook.disabled', 'webhook.delivery_failed'] as const satisfies readonly EventType[];
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

export function isOperationalEventType(type: string): type is OperationalEventType {
  return (OPERATIONAL_EVENT_TYPES as readonly string[]).includes(type);
}

/** Why a producer may not publish an operational type, naming the field (`type`, `events[2].type`). */
export function reservedEventTypeMessage(field: string, type: OperationalEventType): string {
  return `${field} ${type} is published by Hookline itself (about the store's endpoints) and cannot be published through the API; endpoints can subscribe to it`;
}

/** The types a producer may publish (POST /events, EventPublisher): all but the operational ones. */
export const PUBLISHABLE_EVENT_TYPES: readonly EventType[] = Object.freeze(
  (Object.keys(EVENT_CATALOGUE) as EventType[]).filter((type) => !isOperationalEventType(type)),
);

/** The catalogue is shared by every module: nobody may change an example by accident. */
function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child as object);
  }
  return Object.freeze(value);
}

/** The 20 event types, in catalogue order. */
export const EVENT_TYPES: readonly EventType[] = Object.freeze(Object.keys(EVENT_CATALOGUE) as EventType[]);

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && Object.hasOwn(EVENT_CATALOGUE, value);
}

/**
 * The event of POST /webhooks/:id/test. It is delivered like any other event but is not in the
 * catalogue: no endpoint can subscribe to it and nobody can publish it.
 */
export const TEST_EVENT_TYPE = 'webhook.test';
export type TestEventType = typeof TEST_EVENT_TYPE;

export const TEST_EVENT = {
  type: TEST_EVENT_TYPE,
  description: 'An endpoint is tested (POST /webhooks/:id/test). Not subscribable.',
  dataClass: TestEventData,
  example: Object.freeze({
    webhookId: 'wh_01jd3v8k2m9q4r7s6t5v4w3x2y',
    name: 'Order sync',
    message: 'This is a test event from Hookline. No action is needed.',
  } satisfies TestEventData),
} as const;

/** Every data class, for `@ApiExtraModels(...)` so that the OpenAPI document carries each shape. */
export const EVENT_DATA_CLASSES: readonly DataClass[] = [
  ...new Set<DataClass>([...EVENT_TYPES.map((type) => EVENT_CATALOGUE[type].dataClass), TestEventData]),
];

/**
 * Checks `data` against the shape of `type` at run time (POST /events, and a guard for in-process
 * publishers). Strict: unknown fields, wrong types, numbers as strings, non-integer or negative
 * amounts, bad currencies and unknown status values are all problems. Returns one message per
 * problem, naming the field (`data.total must be an integer`); empty when `data` is valid.
 *
 * The field checks give the messages and the rules across fields (`previousStatus` differs from
 * `status`), which JSON Schema cannot say; the type's JSON Schema has the last word on the rest,
 * so whatever is published validates against the schema integrators are given.
 */
export function validateEventData(type: EventType | TestEventType, data: unknown): string[] {
  const problems = validateShape(dataClassOf(type), data);
  if (problems.length > 0) return problems;
  const conforms = validatorOf(type);
  return conforms(data) ? [] : schemaProblems(conforms.errors);
}

function dataClassOf(type: EventType | TestEventType): DataClass {
  if (type === TEST_EVENT_TYPE) return TestEventData;
  if (!isEventType(type)) throw new TypeError(`Unknown event type: ${String(type)}`);
  return EVENT_CATALOGUE[type].dataClass;
}

const VALIDATORS = new Map<string, ReturnType<typeof compileSchema>>();

function validatorOf(type: EventType | TestEventType) {
  let validator = VALIDATORS.get(type);
  if (!validator) {
    validator = compileSchema(jsonSchemaOf(dataClassOf(type)));
    VALIDATORS.set(type, validator);
  }
  return validator;
}

/**
 * The JSON Schema (2020-12) of the `data` of `type`, with its description and example: what
 * GET /event-types/:type and the OpenAPI document's `webhooks` give integrators.
 */
export function eventDataSchema(type: EventType): JsonSchema {
  const { description, example, dataClass } = EVENT_CATALOGUE[type];
  return {
    $schema: JSON_SCHEMA_DIALECT,
    title: `${type} data`,
    description,
    ...jsonSchemaOf(dataClass),
    examples: [structuredClone(example)],
  };
}

export interface EventTypeDescription {
  type: EventType;
  category: EventCategory;
  description: string;
  example: EventData<EventType>;
  /** The `data` shape: a JSON Schema (2020-12). */
  schema: JsonSchema;
}

/** One type of the catalogue as plain data, for GET /event-types/:type. */
export function describeEventType(type: EventType): EventTypeDescription {
  const { category, description, example } = EVENT_CATALOGUE[type];
  return { type, category, description, example: structuredClone(example), schema: eventDataSchema(type) };
}

/** The catalogue as plain data, for GET /event-types and the dashboard. */
export function describeCatalogue(): EventTypeDescription[] {
  return EVENT_TYPES.map(describeEventType);
}
