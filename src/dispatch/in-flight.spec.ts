import type { ClaimedDelivery } from './delivery.repository';
import { InFlight } from './in-flight';

function delivery(id: string, webhookId: string): ClaimedDelivery {
  return { id, webhookId } as ClaimedDelivery;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('InFlight', () => {
  it('counts sends in total and per endpoint, and tells the claim which endpoints are full', () => {
    const slots = new InFlight(10, 2);
    slots.track(delivery('d1', 'wh_a'), deferred().promise, () => undefined);
    slots.track(delivery('d2', 'wh_a'), deferred().promise, () => undefined);
    slots.track(delivery('d3', 'wh_b'), deferred().promise, () => undefined);
    expect(slots.size).toBe(3);
    expect(slots.room).toBe(7);
    expect(slots.endpointLimits()).toEqual({ excluded: ['wh_a'], partial: [{ webhookId: 'wh_b', available: 1 }], perEndpoint: 2 });
  });

  it('frees the slot when the send settles and reports what is left for its endpoint', async () => {
    const slots = new InFlight(10, 4);
    const first = deferred();
    const left: number[] = [];
    slots.track(delivery('d1', 'wh_a'), first.promise, (n) => left.push(n));
    slots.track(delivery('d2', 'wh_a'), deferred().promise, (n) => left.push(n));
    first.resolve();
    await first.promise;
    await Promise.resolve();
    expect(left).toEqual([1]);
    expect(slots.ids()).toEqual(['d2']);
  });

  it('drains once every send under way has ended', async () => {
    const slots = new InFlight(10, 4);
    const send = deferred();
    slots.track(delivery('d1', 'wh_a'), send.promise, () => undefined);
    let drained = false;
    const waiting = slots.drained().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    send.resolve();
    await waiting;
    expect(drained).toBe(true);
  });
});
