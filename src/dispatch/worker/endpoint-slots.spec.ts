import { EndpointSlots } from './endpoint-slots';

describe('EndpointSlots', () => {
  const idle = () => 0;

  it('halves an endpoint’s slots at each timeout, down to 1', () => {
    const slots = new EndpointSlots(64);
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      slots.timedOut('wh_a', idle);
      seen.push(slots.of('wh_a'));
    }
    expect(seen).toEqual([32, 16, 8, 4, 2, 1, 1, 1]);
    expect(slots.of('wh_b')).toBe(64);
  });

  it('gives one slot back per success until the endpoint has them all again', () => {
    const slots = new EndpointSlots(4);
    slots.timedOut('wh_a', idle);
    slots.timedOut('wh_a', idle);
    expect(slots.of('wh_a')).toBe(1);
    slots.succeeded('wh_a');
    slots.succeeded('wh_a');
    expect([...slots.entries()]).toEqual([['wh_a', 3]]);
    slots.succeeded('wh_a');
    expect(slots.of('wh_a')).toBe(4);
    expect([...slots.entries()]).toEqual([]);
  });

  it('keeps an endpoint of one slot at one', () => {
    const slots = new EndpointSlots(1);
    slots.timedOut('wh_a', idle);
    expect(slots.of('wh_a')).toBe(1);
    expect([...slots.entries()]).toEqual([]);
  });

  it('forgets endpoints with nothing in flight, oldest first, when it remembers too many', () => {
    const slots = new EndpointSlots(64);
    for (let i = 0; i < 10_000; i++) slots.timedOut(`wh_${i}`, idle);
    const inFlight = (id: string) => (id === 'wh_0' ? 1 : 0);
    slots.timedOut('wh_new', inFlight);
    expect(slots.of('wh_0')).toBe(32);
    expect(slots.of('wh_1')).toBe(64);
    expect(slots.of('wh_9999')).toBe(32);
    expect(slots.of('wh_new')).toBe(32);
    expect([...slots.entries()].length).toBeLessThanOrEqual(5_001);
  });
});
