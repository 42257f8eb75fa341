import { unknownEventTypeMessage } from './unknown-event-type';

describe('unknownEventTypeMessage', () => {
  it('quotes a published type and suggests the catalogue type it is a typo of', () => {
    expect(unknownEventTypeMessage('type', 'order.creatd')).toBe(
      'type is an unknown event type: "order.creatd" (did you mean "order.created"?); see GET /event-types',
    );
    expect(unknownEventTypeMessage('type', 'ORDER.CREATED')).toBe(
      'type is an unknown event type: "ORDER.CREATED" (did you mean "order.created"?); see GET /event-types',
    );
  });

  it('quotes a type that resembles none without a suggestion', () => {
    expect(unknownEventTypeMessage('type', 'webhook.test')).toBe('type is an unknown event type: "webhook.test"; see GET /event-types');
  });

  it('names only the unknown entries of a subscription list, each with its suggestion', () => {
    expect(unknownEventTypeMessage('events', ['order.created', 'payment.recieved'])).toBe(
      'events contains an unknown event type: "payment.recieved" (did you mean "payment.received"?); see GET /event-types',
    );
    expect(unknownEventTypeMessage('events', ['stock.lw', 42, 'order.shipped'])).toBe(
      'events contains unknown event types: "stock.lw" (did you mean "stock.low"?), 42, "order.shipped"; see GET /event-types',
    );
  });

  it('echoes a non-string as JSON and cuts a long value', () => {
    expect(unknownEventTypeMessage('type', { a: 1 })).toBe('type is an unknown event type: {"a":1}; see GET /event-types');
    const message = unknownEventTypeMessage('type', 'x'.repeat(5000));
    expect(message).toBe(`type is an unknown event type: "${'x'.repeat(99)}…; see GET /event-types`);
  });

  it('escapes control characters of the echoed value', () => {
    expect(unknownEventTypeMessage('type', 'a\r\nb')).toBe('type is an unknown event type: "a\\r\\nb"; see GET /event-types');
  });
});
