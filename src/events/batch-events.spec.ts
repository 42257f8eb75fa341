import { EVENT_CATALOGUE } from '../catalogue/event-catalogue';
import { batchProblems, MAX_BATCH_EVENTS } from './batch-events';

const order = EVENT_CATALOGUE['order.created'].example;

describe('batchProblems', () => {
  it('accepts 1 to 1,000 valid events, keys optional', () => {
    expect(batchProblems([{ type: 'order.created', data: order }])).toEqual([]);
    const many = Array.from({ length: MAX_BATCH_EVENTS }, (_, i) => ({ type: 'order.created', data: order, idempotencyKey: `k-${i}` }));
    expect(batchProblems(many)).toEqual([]);
  });

  it('refuses an empty batch, one over 1,000 events and a list that is not an array', () => {
    expect(batchProblems([])).toEqual(['events must hold 1 to 1,000 events (got 0)']);
    expect(batchProblems(Array.from({ length: 1001 }, () => ({ type: 'order.created', data: order })))).toEqual([
      'events must hold 1 to 1,000 events (got 1001)',
    ]);
    expect(batchProblems({ type: 'order.created' })).toEqual(['events must be an array']);
  });

  it('names every bad event by its index, with the problems of its data as a single publish words them', () => {
    const { total: _total, ...withoutTotal } = order;
    expect(
      batchProblems([
        { type: 'order.created', data: order },
        { type: 'order.creatd', data: order },
        { type: 'order.created', data: { ...order, currency: 'euro' } },
        { type: 'order.created', data: withoutTotal },
      ]),
    ).toEqual([
      'events[1].type is an unknown event type: "order.creatd" (did you mean "order.created"?); see GET /event-types',
      'events[2].data.currency must be a three-letter ISO 4217 currency code in upper case, such as EUR',
      'events[3].data.total is required',
    ]);
  });

  it('refuses events that are not objects, miss type or data, or carry unknown fields', () => {
    expect(
      batchProblems([null, 'x', [], { data: order }, { type: 'order.created' }, { type: 'order.created', data: order, extra: 1 }]),
    ).toEqual([
      'events[0] must be an object',
      'events[1] must be an object',
      'events[2] must be an object',
      'events[3].type is required',
      'events[4].data is required',
      'events[5].extra is not allowed',
    ]);
    expect(batchProblems([{ type: 'nope', data: 'text' }])).toEqual([
      'events[0].type is an unknown event type: "nope"; see GET /event-types',
      'events[0].data must be an object',
    ]);
    expect(batchProblems([{ type: 'webhook.test', data: { webhookId: 'wh_1', name: 'x', message: 'y' } }])[0]).toMatch(
      /^events\[0\]\.type is an unknown/,
    );
  });

  it('refuses a bad idempotencyKey and the same key on two events of one batch', () => {
    expect(
      batchProblems([
        { type: 'order.created', data: order, idempotencyKey: 'a' },
        { type: 'order.created', data: order, idempotencyKey: 'with space' },
        { type: 'order.created', data: order, idempotencyKey: 7 },
        { type: 'order.created', data: order, idempotencyKey: 'x'.repeat(256) },
        { type: 'order.updated', data: order, idempotencyKey: 'a' },
      ]),
    ).toEqual([
      'events[1].idempotencyKey must be 1 to 255 visible ASCII characters',
      'events[2].idempotencyKey must be 1 to 255 visible ASCII characters',
      'events[3].idempotencyKey must be 1 to 255 visible ASCII characters',
      'events[4].idempotencyKey "a" is also the key of events[0]; each event of a batch needs its own key',
    ]);
  });
});
