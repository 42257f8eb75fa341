import { closestMatch, editDistance } from './closest-match';

const TYPES = ['order.created', 'order.updated', 'order.cancelled', 'payment.received', 'stock.low', 'stock.updated'];

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', '', 3],
    ['', 'abc', 3],
    ['order.created', 'order.created', 0],
    ['order.creatd', 'order.created', 1],
    ['order.craeted', 'order.created', 1],
    ['kitten', 'sitting', 3],
    ['ca', 'abc', 3],
  ])('between %j and %j is %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('closestMatch', () => {
  it.each([
    ['order.creatd', 'order.created'],
    ['order.craeted', 'order.created'],
    ['ORDER.CREATED', 'order.created'],
    ['payment.recieved', 'payment.received'],
    ['order.updatd', 'order.updated'],
    ['stock.lo', 'stock.low'],
  ])('suggests the type %j was probably meant to be: %j', (input, expected) => {
    expect(closestMatch(input, TYPES)).toBe(expected);
  });

  it.each([
    ['stock.high', 'stock.high'],
    ['order.shipped', 'order.shipped'],
    ['webhook.test', 'webhook.test'],
    ['a single letter', 'x'],
    ['an empty string', ''],
    ['500 letters', 'o'.repeat(500)],
  ])('suggests nothing for %s, which is no near miss', (_case, input) => {
    expect(closestMatch(input, TYPES)).toBeUndefined();
  });

  it('prefers the nearest candidate, then the first in order', () => {
    expect(closestMatch('abcd', ['abxx', 'abcx', 'abcy'])).toBe('abcx');
  });
});
