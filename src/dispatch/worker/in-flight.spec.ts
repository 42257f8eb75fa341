import type { ClaimedDelivery } from '../store/delivery.repository';
import { Freed, InFlight } from './in-flight';

function delivery(id: string, webhookId: string, storeId = 'st_a'): ClaimedDelivery {
  return { id, webhookId, storeId } as ClaimedDelivery;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function settle(send: { promise: Promise<void>; resolve: () => void }): Promise<void> {
  send.resolve();
  await send.promise;
  await Promise.resolve();
}

describe('InFlight', () => {
  it('counts sends in total, per endpoint and per store, and tells the claim which are full', () => {
    const slots = new InFlight(10, 2, 3, { endpoint: 0.25, store: 0.25 });
    slots.track(delivery('d1', 'wh_a'), deferred().promise, () => undefined);
    slots.track(delivery('d2', 'wh_a'), deferred().promise, () => undefined);
    slots.track(delivery('d3', 'wh_b'), deferred().promise, () => undefined);
    slots.track(delivery('d4', 'wh_c', 'st_b'), deferred().promise, () => undefined);
    expect(slots.size).toBe(4);
    expect(slots.room).toBe(6);
    expect([slots.storeRoom('st_a'), slots.storeRoom('st_b'), slots.storeRoom('st_c')]).toEqual([0, 2, 3]);
    expect(slots.limits()).toEqual({
      excluded: ['wh_a'],
      partial: new Map([
        ['wh_b', 1],
        ['wh_c', 1],
      ]),
      perEndpoint: 2,
      excludedStores: ['st_a'],
      partialStores: new Map([['st_b', 2]]),
      perStore: 3,
    });
  });

  it('frees the slot when the send settles, and says when a share of a full endpoint’s or store’s slots is free again', async () => {
    const slots = new InFlight(100, 4, 8, { endpoint: 0.25, store: 0.25 });
    const sends = Array.from({ length: 8 }, () => deferred());
    const freed: Freed[] = [];
    sends.forEach((send, i) => slots.track(delivery(`d${i}`, i < 4 ? 'wh_a' : 'wh_b'), send.promise, (f) => freed.push(f)));
    await settle(sends[0]);
    // wh_a had its 4 slots, 3 are left: a quarter free. The store had 8 of 8, 7 are left.
    expect(freed).toEqual([{ endpoint: true, store: false }]);
    await settle(sends[1]);
    await settle(sends[4]);
    expect(freed.slice(1)).toEqual([
      { endpoint: false, store: true },
      { endpoint: true, store: false },
    ]);
    expect(slots.ids()).toEqual(['d2', 'd3', 'd5', 'd6', 'd7']);
  });

  it('gives an endpoint that times out fewer slots, and one back per success', async () => {
    const slots = new InFlight(100, 8, 100, { endpoint: 0.25, store: 0.25 });
    const sends = Array.from({ length: 3 }, () => deferred());
    sends.forEach((send, i) => slots.track(delivery(`d${i}`, 'wh_slow'), send.promise, () => undefined));
    slots.timedOut('wh_slow');
    expect(slots.limits().partial).toEqual(new Map([['wh_slow', 1]]));
    slots.timedOut('wh_slow');
    expect(slots.limits().excluded).toEqual(['wh_slow']);
    for (const send of sends) await settle(send);
    // Nothing in flight: its two slots are still all it may take.
    expect(slots.limits().partial).toEqual(new Map([['wh_slow', 2]]));
    slots.succeeded('wh_slow');
    expect(slots.limits().partial).toEqual(new Map([['wh_slow', 3]]));
  });

  it('drains once every send under way has ended', async () => {
    const slots = new InFlight(10, 4, 10, { endpoint: 0.25, store: 0.25 });
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
