import { Test } from '@nestjs/testing';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { describeShape } from './data-shape';
import {
  describeCatalogue,
  EVENT_CATALOGUE,
  EVENT_CATEGORIES,
  EVENT_DATA_CLASSES,
  EVENT_TYPES,
  type EventCategory,
  type EventType,
  isEventType,
  isOperationalEventType,
  OPERATIONAL_EVENT_TYPES,
  TEST_EVENT,
  TEST_EVENT_TYPE,
  validateEventData,
} from './event-catalogue';

/** The platform's table of event types, copied verbatim: category, type, "Fires when". */
const SEED_TABLE: ReadonlyArray<readonly [string, string, string]> = [
  ['Orders', 'order.created', 'A new order is placed.'],
  ['Orders', 'order.updated', 'Order details are modified.'],
  ['Orders', 'order.cancelled', 'An order is cancelled.'],
  ['Orders', 'order.completed', 'An order is marked completed.'],
  ['Orders', 'order.status_changed', 'Any change of order status.'],
  ['Payments', 'payment.received', 'Payment is captured or cash on delivery is collected.'],
  ['Payments', 'payment.refunded', 'A payment is refunded or cancelled.'],
  ['Products', 'product.created', 'A new product is added.'],
  ['Products', 'product.updated', 'Product details change.'],
  ['Products', 'product.deleted', 'A product is deleted.'],
  ['Inventory', 'stock.low', 'Stock falls below the threshold.'],
  ['Inventory', 'stock.updated', 'Stock quantity changes.'],
  ['Customers', 'customer.created', 'A new customer registers.'],
  ['Customers', 'customer.updated', 'Customer information is updated.'],
  ['Deliveries', 'delivery.batch_started', 'A batch of deliveries is dispatched.'],
  ['Deliveries', 'delivery.batch_completed', 'All stops of a batch are completed.'],
  ['Deliveries', 'delivery.completed', 'An individual delivery is completed.'],
  ['Deliveries', 'delivery.failed', 'A delivery attempt fails.'],
];

/** Hookline's own operational types, after the platform's. */
const OPERATIONAL_TABLE: ReadonlyArray<readonly [string, string]> = [
  ['Webhooks', 'webhook.disabled'],
  ['Webhooks', 'webhook.delivery_failed'],
];
const ALL_TYPES = [...SEED_TABLE, ...OPERATIONAL_TABLE].map(([category, type]) => [category, type] as const);

/** The platform's four given `data` shapes, field by field. */
const SEED_SHAPES: Partial<Record<EventType, string[]>> = {
  'order.created': ['id', 'orderNumber', 'status', 'total', 'currency'],
  'payment.received': ['orderId', 'orderNumber', 'amount', 'currency', 'paymentMethod', 'status'],
  'product.created': ['id', 'name', 'sku', 'price', 'status'],
  'delivery.completed': ['orderId', 'orderNumber'],
};

type Data = Record<string, unknown>;

/** A copy of the example of `type` with some fields replaced (`undefined` removes a field). */
function example(type: EventType, changes: Data = {}): Data {
  const data: Data = { ...structuredClone(EVENT_CATALOGUE[type].example), ...changes };
  for (const [key, value] of Object.entries(changes)) if (value === undefined) delete data[key];
  return data;
}

describe('the event catalogue', () => {
  it("has exactly the platform's 18 event types, in its order, then Hookline's 2 operational ones", () => {
    expect(EVENT_TYPES).toEqual(ALL_TYPES.map(([, type]) => type));
    expect(Object.keys(EVENT_CATALOGUE)).toEqual(EVENT_TYPES);
  });

  it("puts each type in its category, among exactly the platform's 6 and Webhooks", () => {
    expect(EVENT_CATEGORIES).toEqual([...new Set(ALL_TYPES.map(([category]) => category))]);
    for (const [category, type] of ALL_TYPES) {
      expect(EVENT_CATALOGUE[type as EventType]).toMatchObject({ type, category });
    }
  });

  it('describes each type with its "Fires when"', () => {
    for (const [, type, firesWhen] of SEED_TABLE) expect(EVENT_CATALOGUE[type as EventType].description).toBe(firesWhen);
  });

  it('tells the operational types apart', () => {
    expect(EVENT_TYPES.filter((type) => isOperationalEventType(type))).toEqual(OPERATIONAL_EVENT_TYPES);
    expect(isOperationalEventType('webhook.test')).toBe(false);
  });

  it('recognises the 20 types and nothing else', () => {
    for (const type of EVENT_TYPES) expect(isEventType(type)).toBe(true);
    for (const other of ['webhook.test', 'ORDER.CREATED', 'order.created ', 'order', 'toString', '__proto__', 1, null, undefined]) {
      expect(isEventType(other)).toBe(false);
    }
  });

  it('keeps webhook.test out of the subscribable types, with a data shape of its own', () => {
    expect(TEST_EVENT_TYPE).toBe('webhook.test');
    expect(EVENT_TYPES).not.toContain(TEST_EVENT_TYPE);
    expect(Object.keys(describeShape(TEST_EVENT.dataClass).properties)).toEqual(['webhookId', 'name', 'message']);
  });
});

describe('validateEventData', () => {
  it.each(EVENT_TYPES)('accepts the example of %s', (type) => {
    expect(validateEventData(type, EVENT_CATALOGUE[type].example)).toEqual([]);
  });

  it.each(EVENT_TYPES)('accepts the example of %s after a JSON round trip', (type) => {
    expect(validateEventData(type, JSON.parse(JSON.stringify(EVENT_CATALOGUE[type].example)))).toEqual([]);
  });

  it.each(EVENT_TYPES)('rejects the example of %s with an extra field', (type) => {
    expect(validateEventData(type, example(type, { extra: 1 }))).toEqual(['data.extra is not allowed']);
  });

  it('accepts the example of webhook.test and rejects it with an extra field or a missing one', () => {
    expect(validateEventData(TEST_EVENT_TYPE, TEST_EVENT.example)).toEqual([]);
    expect(validateEventData(TEST_EVENT_TYPE, { ...TEST_EVENT.example, extra: true })).toEqual(['data.extra is not allowed']);
    expect(validateEventData(TEST_EVENT_TYPE, { ...TEST_EVENT.example, message: undefined })).toEqual(['data.message is required']);
  });

  it('throws on a type outside the catalogue (a programming error, not a data problem)', () => {
    expect(() => validateEventData('order.placed' as EventType, {})).toThrow(TypeError);
  });

  type Kind =
    | 'not an object'
    | 'missing field'
    | 'wrong type'
    | 'non-integer number'
    | 'negative number'
    | 'bad currency'
    | 'unknown status'
    | 'unknown field'
    | 'nested object';

  interface Rejection {
    kind: Kind;
    type: EventType;
    data: unknown;
    problems: string[];
  }

  const notAnObject = (type: EventType): Rejection[] =>
    [null, [example(type)], 'order', 42, true].map((data) => ({
      kind: 'not an object',
      type,
      data,
      problems: ['data must be an object'],
    }));

  /** Per category, every kind of rejection its shapes allow (Customers have no numbers or statuses). */
  const REJECTIONS: Record<EventCategory, Rejection[]> = {
    Orders: [
      ...notAnObject('order.created'),
      {
        kind: 'missing field',
        type: 'order.created',
        data: example('order.created', { total: undefined }),
        problems: ['data.total is required'],
      },
      {
        kind: 'missing field',
        type: 'order.status_changed',
        data: example('order.status_changed', { previousStatus: undefined }),
        problems: ['data.previousStatus is required'],
      },
      {
        kind: 'wrong type',
        type: 'order.created',
        data: example('order.created', { total: '4998' }),
        problems: ['data.total must be an integer'],
      },
      {
        kind: 'wrong type',
        type: 'order.updated',
        data: example('order.updated', { orderNumber: 1042 }),
        problems: ['data.orderNumber must be a string'],
      },
      {
        kind: 'wrong type',
        type: 'order.cancelled',
        data: example('order.cancelled', { reason: null }),
        problems: ['data.reason must be a string'],
      },
      {
        kind: 'non-integer number',
        type: 'order.completed',
        data: example('order.completed', { total: 49.98 }),
        problems: ['data.total must be an integer'],
      },
      {
        kind: 'negative number',
        type: 'order.created',
        data: example('order.created', { total: -1 }),
        problems: ['data.total must not be negative'],
      },
      {
        kind: 'bad currency',
        type: 'order.created',
        data: example('order.created', { currency: 'eur' }),
        problems: ['data.currency must be a three-letter ISO 4217 currency code in upper case, such as EUR'],
      },
      {
        kind: 'bad currency',
        type: 'order.updated',
        data: example('order.updated', { currency: 'EURO' }),
        problems: ['data.currency must be a three-letter ISO 4217 currency code in upper case, such as EUR'],
      },
      {
        kind: 'unknown status',
        type: 'order.created',
        data: example('order.created', { status: 'pending' }),
        problems: ['data.status must be one of PENDING, CONFIRMED, PROCESSING, SHIPPED, DELIVERED, COMPLETED, CANCELLED'],
      },
      {
        kind: 'unknown status',
        type: 'order.status_changed',
        data: example('order.status_changed', { previousStatus: 'LOST' }),
        problems: ['data.previousStatus must be one of PENDING, CONFIRMED, PROCESSING, SHIPPED, DELIVERED, COMPLETED, CANCELLED'],
      },
      {
        kind: 'unknown field',
        type: 'order.created',
        data: example('order.created', { customerId: 'cus_1' }),
        problems: ['data.customerId is not allowed'],
      },
    ],
    Payments: [
      ...notAnObject('payment.received'),
      {
        kind: 'missing field',
        type: 'payment.received',
        data: example('payment.received', { paymentMethod: undefined }),
        problems: ['data.paymentMethod is required'],
      },
      {
        kind: 'missing field',
        type: 'payment.refunded',
        data: example('payment.refunded', { refundedAmount: undefined }),
        problems: ['data.refundedAmount is required'],
      },
      {
        kind: 'wrong type',
        type: 'payment.received',
        data: example('payment.received', { amount: '4998' }),
        problems: ['data.amount must be an integer'],
      },
      {
        kind: 'wrong type',
        type: 'payment.received',
        data: example('payment.received', { orderId: 17 }),
        problems: ['data.orderId must be a string'],
      },
      {
        kind: 'non-integer number',
        type: 'payment.refunded',
        data: example('payment.refunded', { refundedAmount: 19.99 }),
        problems: ['data.refundedAmount must be an integer'],
      },
      {
        kind: 'negative number',
        type: 'payment.received',
        data: example('payment.received', { amount: -4998 }),
        problems: ['data.amount must not be negative'],
      },
      {
        kind: 'negative number',
        type: 'payment.refunded',
        data: example('payment.refunded', { refundedAmount: -1 }),
        problems: ['data.refundedAmount must not be negative'],
      },
      {
        kind: 'bad currency',
        type: 'payment.refunded',
        data: example('payment.refunded', { currency: 'E1R' }),
        problems: ['data.currency must be a three-letter ISO 4217 currency code in upper case, such as EUR'],
      },
      {
        kind: 'unknown status',
        type: 'payment.received',
        data: example('payment.received', { status: 'PAID' }),
        problems: ['data.status must be one of CAPTURED, PARTIALLY_REFUNDED, REFUNDED, CANCELLED'],
      },
      {
        kind: 'unknown status',
        type: 'payment.received',
        data: example('payment.received', { paymentMethod: 'CASH' }),
        problems: ['data.paymentMethod must be one of CARD, CASH_ON_DELIVERY, BANK_TRANSFER, WALLET'],
      },
      {
        kind: 'unknown field',
        type: 'payment.refunded',
        data: example('payment.refunded', { refundId: 're_1' }),
        problems: ['data.refundId is not allowed'],
      },
    ],
    Products: [
      ...notAnObject('product.created'),
      {
        kind: 'missing field',
        type: 'product.created',
        data: example('product.created', { sku: undefined }),
        problems: ['data.sku is required'],
      },
      {
        kind: 'wrong type',
        type: 'product.updated',
        data: example('product.updated', { price: '24.99' }),
        problems: ['data.price must be an integer'],
      },
      {
        kind: 'wrong type',
        type: 'product.deleted',
        data: example('product.deleted', { name: ['T-shirt'] }),
        problems: ['data.name must be a string'],
      },
      {
        kind: 'non-integer number',
        type: 'product.created',
        data: example('product.created', { price: 24.99 }),
        problems: ['data.price must be an integer'],
      },
      {
        kind: 'negative number',
        type: 'product.updated',
        data: example('product.updated', { price: -100 }),
        problems: ['data.price must not be negative'],
      },
      {
        kind: 'unknown status',
        type: 'product.created',
        data: example('product.created', { status: 'DELETED' }),
        problems: ['data.status must be one of DRAFT, ACTIVE, INACTIVE, ARCHIVED'],
      },
      {
        kind: 'unknown field',
        type: 'product.deleted',
        data: example('product.deleted', { deletedAt: '2026-11-22T10:00:00.000Z' }),
        problems: ['data.deletedAt is not allowed'],
      },
    ],
    Inventory: [
      ...notAnObject('stock.low'),
      {
        kind: 'missing field',
        type: 'stock.low',
        data: example('stock.low', { threshold: undefined }),
        problems: ['data.threshold is required'],
      },
      {
        kind: 'missing field',
        type: 'stock.updated',
        data: example('stock.updated', { previousQuantity: undefined }),
        problems: ['data.previousQuantity is required'],
      },
      {
        kind: 'wrong type',
        type: 'stock.updated',
        data: example('stock.updated', { quantity: '10' }),
        problems: ['data.quantity must be an integer'],
      },
      { kind: 'wrong type', type: 'stock.low', data: example('stock.low', { sku: null }), problems: ['data.sku must be a string'] },
      {
        kind: 'non-integer number',
        type: 'stock.low',
        data: example('stock.low', { quantity: 2.5 }),
        problems: ['data.quantity must be an integer'],
      },
      {
        kind: 'negative number',
        type: 'stock.updated',
        data: example('stock.updated', { quantity: -1 }),
        problems: ['data.quantity must not be negative'],
      },
      {
        kind: 'unknown field',
        type: 'stock.updated',
        data: example('stock.updated', { warehouse: 'A' }),
        problems: ['data.warehouse is not allowed'],
      },
    ],
    Customers: [
      ...notAnObject('customer.created'),
      {
        kind: 'missing field',
        type: 'customer.created',
        data: example('customer.created', { email: undefined }),
        problems: ['data.email is required'],
      },
      {
        kind: 'wrong type',
        type: 'customer.updated',
        data: example('customer.updated', { firstName: 7 }),
        problems: ['data.firstName must be a string'],
      },
      {
        kind: 'wrong type',
        type: 'customer.updated',
        data: example('customer.updated', { phone: 38640123456 }),
        problems: ['data.phone must be a string'],
      },
      {
        kind: 'unknown field',
        type: 'customer.created',
        data: example('customer.created', { password: 'x' }),
        problems: ['data.password is not allowed'],
      },
    ],
    Deliveries: [
      ...notAnObject('delivery.completed'),
      {
        kind: 'missing field',
        type: 'delivery.completed',
        data: example('delivery.completed', { orderNumber: undefined }),
        problems: ['data.orderNumber is required'],
      },
      {
        kind: 'missing field',
        type: 'delivery.failed',
        data: example('delivery.failed', { reason: undefined }),
        problems: ['data.reason is required'],
      },
      {
        kind: 'wrong type',
        type: 'delivery.batch_completed',
        data: example('delivery.batch_completed', { completedStops: '1' }),
        problems: ['data.completedStops must be an integer'],
      },
      {
        kind: 'wrong type',
        type: 'delivery.batch_started',
        data: example('delivery.batch_started', { stops: { orderId: 'ord_1', orderNumber: '1' } }),
        problems: ['data.stops must be an array'],
      },
      {
        kind: 'non-integer number',
        type: 'delivery.failed',
        data: example('delivery.failed', { attempt: 1.5 }),
        problems: ['data.attempt must be an integer'],
      },
      {
        kind: 'negative number',
        type: 'delivery.batch_completed',
        data: example('delivery.batch_completed', { failedStops: -1 }),
        problems: ['data.failedStops must not be negative'],
      },
      {
        kind: 'unknown status',
        type: 'delivery.failed',
        data: example('delivery.failed', { reason: 'Nobody home' }),
        problems: ['data.reason must be one of CUSTOMER_UNAVAILABLE, ADDRESS_NOT_FOUND, REFUSED, DAMAGED, OTHER'],
      },
      {
        kind: 'unknown field',
        type: 'delivery.completed',
        data: example('delivery.completed', { courier: 'Jo' }),
        problems: ['data.courier is not allowed'],
      },
      {
        kind: 'nested object',
        type: 'delivery.batch_started',
        data: example('delivery.batch_started', { stops: [{ orderId: 'ord_1' }, { orderId: 'ord_2', orderNumber: 2 }] }),
        problems: ['data.stops[0].orderNumber is required', 'data.stops[1].orderNumber must be a string'],
      },
      {
        kind: 'nested object',
        type: 'delivery.batch_started',
        data: example('delivery.batch_started', {
          stops: [
            { orderId: 'ord_1', orderNumber: '1', eta: 'soon' },
            { orderId: 'ord_2', orderNumber: '2' },
          ],
        }),
        problems: ['data.stops[0].eta is not allowed'],
      },
      {
        kind: 'nested object',
        type: 'delivery.batch_started',
        data: example('delivery.batch_started', { stops: [{ orderId: 'ord_1', orderNumber: '1' }, 'ord_2'] }),
        problems: ['data.stops[1] must be an object'],
      },
    ],
    Webhooks: [
      ...notAnObject('webhook.disabled'),
      {
        kind: 'missing field',
        type: 'webhook.delivery_failed',
        data: example('webhook.delivery_failed', { lastError: undefined }),
        problems: ['data.lastError is required'],
      },
      {
        kind: 'wrong type',
        type: 'webhook.delivery_failed',
        data: example('webhook.delivery_failed', { lastStatusCode: '500' }),
        problems: ['data.lastStatusCode must be an integer'],
      },
      {
        kind: 'wrong type',
        type: 'webhook.disabled',
        data: example('webhook.disabled', { disabledAt: null }),
        problems: ['data.disabledAt must be a string'],
      },
      {
        kind: 'non-integer number',
        type: 'webhook.delivery_failed',
        data: example('webhook.delivery_failed', { attemptCount: 1.5 }),
        problems: ['data.attemptCount must be an integer'],
      },
      {
        kind: 'negative number',
        type: 'webhook.delivery_failed',
        data: example('webhook.delivery_failed', { lastStatusCode: -1 }),
        problems: ['data.lastStatusCode must not be negative'],
      },
      {
        kind: 'unknown status',
        type: 'webhook.disabled',
        data: example('webhook.disabled', { reason: 'manual' }),
        problems: ['data.reason must be one of failing, gone'],
      },
      {
        kind: 'unknown field',
        type: 'webhook.disabled',
        data: example('webhook.disabled', { storeId: 'st_1' }),
        problems: ['data.storeId is not allowed'],
      },
    ],
  };

  const APPLICABLE: Record<EventCategory, Kind[]> = {
    Orders: [
      'not an object',
      'missing field',
      'wrong type',
      'non-integer number',
      'negative number',
      'bad currency',
      'unknown status',
      'unknown field',
    ],
    Payments: [
      'not an object',
      'missing field',
      'wrong type',
      'non-integer number',
      'negative number',
      'bad currency',
      'unknown status',
      'unknown field',
    ],
    Products: ['not an object', 'missing field', 'wrong type', 'non-integer number', 'negative number', 'unknown status', 'unknown field'],
    Inventory: ['not an object', 'missing field', 'wrong type', 'non-integer number', 'negative number', 'unknown field'],
    Customers: ['not an object', 'missing field', 'wrong type', 'unknown field'],
    Deliveries: [
      'not an object',
      'missing field',
      'wrong type',
      'non-integer number',
      'negative number',
      'unknown status',
      'unknown field',
      'nested object',
    ],
    Webhooks: ['not an object', 'missing field', 'wrong type', 'non-integer number', 'negative number', 'unknown status', 'unknown field'],
  };

  it('takes null for the facts a failed delivery may not have (no answer, no message)', () => {
    expect(
      validateEventData('webhook.delivery_failed', example('webhook.delivery_failed', { lastStatusCode: null, lastError: null })),
    ).toEqual([]);
    expect(describeShape(EVENT_CATALOGUE['webhook.delivery_failed'].dataClass).properties.lastStatusCode).toMatchObject({
      type: 'integer',
      nullable: true,
    });
  });

  describe.each(EVENT_CATEGORIES)('for %s', (category) => {
    it('tests every kind of rejection its shapes allow, on its own types', () => {
      const cases = REJECTIONS[category];
      expect([...new Set(cases.map((rejection) => rejection.kind))].sort()).toEqual([...APPLICABLE[category]].sort());
      for (const { type } of cases) expect(EVENT_CATALOGUE[type].category).toBe(category);
    });

    it.each(REJECTIONS[category].map((rejection) => [rejection.kind, rejection.type, rejection] as const))(
      'rejects %s (%s)',
      (_kind, type, { data, problems }) => {
        expect(validateEventData(type, data)).toEqual(problems);
      },
    );
  });

  it('names the field in every message, starting with "data."', () => {
    const messages = Object.values(REJECTIONS)
      .flat()
      .filter((rejection) => rejection.kind !== 'not an object')
      .flatMap(({ type, data }) => validateEventData(type, data));
    expect(messages.length).toBeGreaterThan(40);
    for (const message of messages) expect(message).toMatch(/^data\.[A-Za-z]+(\[\d+\]\.?[A-Za-z]*)? /);
  });

  it('reports every problem at once', () => {
    expect(validateEventData('order.created', { id: '', status: 'NEW', total: 1.5, currency: 'eur', extra: 1 })).toEqual([
      'data.extra is not allowed',
      'data.id must not be empty',
      'data.orderNumber is required',
      'data.status must be one of PENDING, CONFIRMED, PROCESSING, SHIPPED, DELIVERED, COMPLETED, CANCELLED',
      'data.total must be an integer',
      'data.currency must be a three-letter ISO 4217 currency code in upper case, such as EUR',
    ]);
  });

  it('never converts types: numbers in strings, booleans and numeric strings stay wrong', () => {
    expect(validateEventData('stock.low', example('stock.low', { quantity: '3', threshold: true }))).toEqual([
      'data.quantity must be an integer',
      'data.threshold must be an integer',
    ]);
    expect(validateEventData('product.created', example('product.created', { sku: 12345 }))).toEqual(['data.sku must be a string']);
  });

  it('rejects keys that class-transformer would silently drop (__proto__, constructor, toString)', () => {
    const data = JSON.parse(
      '{"id":"ord_1","orderNumber":"1","status":"PENDING","total":1,"currency":"EUR","__proto__":{"x":1},"constructor":1,"toString":2}',
    ) as unknown;
    expect(validateEventData('order.created', data)).toEqual([
      'data.__proto__ is not allowed',
      'data.constructor is not allowed',
      'data.toString is not allowed',
    ]);
    const nested = JSON.parse(
      '{"batchId":"b","stopCount":1,"stops":[{"orderId":"ord_1","orderNumber":"1","__proto__":{"orderNumber":"2"}}]}',
    ) as unknown;
    expect(validateEventData('delivery.batch_started', nested)).toEqual(['data.stops[0].__proto__ is not allowed']);
  });

  it('takes optional fields absent or valid, never null', () => {
    expect(validateEventData('order.cancelled', example('order.cancelled', { reason: undefined }))).toEqual([]);
    expect(validateEventData('customer.created', example('customer.created', { phone: '+4915112345678' }))).toEqual([]);
    expect(validateEventData('delivery.failed', example('delivery.failed', { note: undefined, nextAttemptAt: undefined }))).toEqual([]);
    expect(validateEventData('payment.refunded', example('payment.refunded', { reason: null }))).toEqual(['data.reason must be a string']);
  });

  it('checks strings: not empty, not too long, emails, E.164 phones', () => {
    expect(validateEventData('customer.created', example('customer.created', { lastName: '' }))).toEqual([
      'data.lastName must not be empty',
    ]);
    expect(validateEventData('order.created', example('order.created', { orderNumber: 'x'.repeat(65) }))).toEqual([
      'data.orderNumber must be at most 64 characters long',
    ]);
    expect(validateEventData('customer.created', example('customer.created', { email: 'ana@' }))).toEqual([
      'data.email must be an email address',
    ]);
    expect(validateEventData('customer.updated', example('customer.updated', { phone: '040 123 456' }))).toEqual([
      'data.phone must be a phone number in E.164 form, such as +4915112345678',
    ]);
  });

  it('checks timestamps: ISO 8601 UTC with milliseconds, a real date', () => {
    const message = 'data.nextAttemptAt must be an ISO 8601 UTC timestamp with milliseconds, such as 2026-11-22T10:00:00.000Z';
    for (const nextAttemptAt of ['2026-11-23T09:00:00Z', '2026-11-23T10:00:00.000+01:00', '2026-02-30T09:00:00.000Z', 'tomorrow']) {
      expect(validateEventData('delivery.failed', example('delivery.failed', { nextAttemptAt }))).toEqual([message]);
    }
  });

  it('checks integers: unsafe sizes and their own minimums', () => {
    expect(validateEventData('order.created', example('order.created', { total: 2 ** 53 }))).toEqual([
      `data.total must be at most ${Number.MAX_SAFE_INTEGER}`,
    ]);
    expect(validateEventData('delivery.failed', example('delivery.failed', { attempt: 0 }))).toEqual(['data.attempt must be at least 1']);
    expect(validateEventData('order.created', example('order.created', { total: Number.NaN }))).toEqual(['data.total must be an integer']);
  });

  it('checks the rules between fields', () => {
    expect(validateEventData('payment.refunded', example('payment.refunded', { refundedAmount: 4999 }))).toEqual([
      'data.refundedAmount must not exceed data.amount',
    ]);
    expect(validateEventData('payment.refunded', example('payment.refunded', { status: 'REFUNDED', refundedAmount: 4998 }))).toEqual([]);
    expect(validateEventData('order.status_changed', example('order.status_changed', { previousStatus: 'SHIPPED' }))).toEqual([
      'data.previousStatus must differ from data.status',
    ]);
    expect(validateEventData('delivery.batch_started', example('delivery.batch_started', { stopCount: 3 }))).toEqual([
      'data.stopCount must equal the number of data.stops',
    ]);
    expect(validateEventData('delivery.batch_started', example('delivery.batch_started', { stopCount: 0, stops: [] }))).toEqual([
      'data.stopCount must be at least 1',
      'data.stops must have at least 1 item',
    ]);
  });
});

/** The parts of a data schema these specs read. */
interface DataSchema {
  properties: Record<string, { description: string; enum?: unknown[] }>;
  required: string[];
}

describe('describeCatalogue', () => {
  const described = describeCatalogue().map((entry) => ({ ...entry, schema: entry.schema as unknown as DataSchema }));

  it('lists the 20 types in order with category, description and example', () => {
    expect(described.map((entry) => entry.type)).toEqual(EVENT_TYPES);
    for (const entry of described) {
      const { category, description, example: sample } = EVENT_CATALOGUE[entry.type];
      expect(entry).toMatchObject({ category, description, example: sample });
    }
  });

  it("keeps the platform's four given shapes exactly", () => {
    for (const [type, fields] of Object.entries(SEED_SHAPES)) {
      const { schema } = described.find((entry) => entry.type === type)!;
      expect(Object.keys(schema.properties)).toEqual(fields);
      expect(schema.required).toEqual(fields);
    }
  });

  it('describes the order shape field by field', () => {
    expect(described[0].schema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'order.created data',
      description: 'A new order is placed.',
      examples: [EVENT_CATALOGUE['order.created'].example],
      type: 'object',
      properties: {
        id: { type: 'string', description: 'Order identifier.', minLength: 1, maxLength: 128 },
        orderNumber: { type: 'string', description: 'Human-readable order number.', minLength: 1, maxLength: 64 },
        status: {
          type: 'string',
          description: expect.stringContaining('PENDING on order.created') as string,
          enum: ['PENDING', 'CONFIRMED', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'COMPLETED', 'CANCELLED'],
        },
        total: {
          type: 'integer',
          description: expect.stringContaining('minor currency units') as string,
          minimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
        },
        currency: { type: 'string', description: expect.any(String) as string, pattern: '^[A-Z]{3}$' },
      },
      required: ['id', 'orderNumber', 'status', 'total', 'currency'],
      additionalProperties: false,
    });
  });

  it('documents every field of every example, and each example has every required field', () => {
    for (const { type, example: sample, schema } of described) {
      const keys = Object.keys(sample);
      expect({ type, undocumented: keys.filter((key) => !(key in schema.properties)) }).toEqual({ type, undocumented: [] });
      expect({ type, missing: schema.required.filter((key) => !keys.includes(key)) }).toEqual({ type, missing: [] });
      for (const property of Object.values(schema.properties)) expect(property.description.length).toBeGreaterThan(3);
    }
  });

  it("writes every enum-like value of the platform's types in UPPER_CASE (webhook.disabled's reason is the endpoint's disabledReason)", () => {
    const values = described
      .filter(({ category }) => category !== 'Webhooks')
      .flatMap(({ schema }) => Object.values(schema.properties).flatMap((property) => property.enum ?? []));
    expect(values.length).toBeGreaterThan(0);
    for (const value of values) expect(value).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
  });

  it('describes nested objects too', () => {
    const { schema } = described.find((entry) => entry.type === 'delivery.batch_started')!;
    expect(schema.properties.stops).toMatchObject({
      type: 'array',
      minItems: 1,
      items: { type: 'object', required: ['orderId', 'orderNumber'], additionalProperties: false },
    });
  });

  it('hands out copies: changing one does not change the catalogue', () => {
    const first = describeCatalogue();
    (first[0].example as { total: number }).total = 1;
    (first[0].schema.required as string[]).pop();
    expect(describeCatalogue()[0].example).toEqual(EVENT_CATALOGUE['order.created'].example);
    expect(describeCatalogue()[0].schema.required).toHaveLength(5);
    expect(Object.isFrozen(EVENT_CATALOGUE['delivery.batch_started'].example.stops[0])).toBe(true);
  });
});

describe('the OpenAPI document', () => {
  it('carries every data class with the same fields, required list and enums as describeCatalogue', async () => {
    const moduleRef = await Test.createTestingModule({}).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    const document = SwaggerModule.createDocument(app, new DocumentBuilder().build(), {
      extraModels: [...EVENT_DATA_CLASSES],
    });
    await app.close();
    const schemas = document.components?.schemas ?? {};

    for (const dataClass of EVENT_DATA_CLASSES) {
      const shape = describeShape(dataClass);
      const openApi = schemas[dataClass.name] as {
        properties: Record<string, { enum?: string[]; example?: unknown; description?: string }>;
        required: string[];
      };
      expect(Object.keys(openApi.properties)).toEqual(Object.keys(shape.properties));
      expect([...openApi.required].sort()).toEqual([...shape.required].sort());
      for (const [name, property] of Object.entries(shape.properties)) {
        expect(openApi.properties[name]).toMatchObject({ description: property.description });
        expect(openApi.properties[name].example).toBeDefined();
        if (property.enum) expect(openApi.properties[name].enum).toEqual(property.enum);
      }
    }
    expect(schemas.DeliveryStop).toBeDefined();
  });
});
