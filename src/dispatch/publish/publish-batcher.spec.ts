import type { HandOff } from '../store/delivery.repository';
import type { Dispatcher } from '../worker/dispatcher';
import type { EventRepository, NewEvent } from '../store/event.repository';
import { PublishBatcher } from './publish-batcher';

function event(id: string, storeId = 'st_default'): NewEvent {
  return { id, storeId, type: 'order.created', body: `{"id":"${id}"}`, createdAt: new Date() };
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('PublishBatcher', () => {
  let statements: string[][];
  let gate: ReturnType<typeof deferred<void>> | undefined;
  let handOff: HandOff | undefined;
  let taken: unknown[][];
  let batcher: PublishBatcher;

  beforeEach(() => {
    statements = [];
    gate = undefined;
    handOff = undefined;
    taken = [];
    const events = {
      publishMany: async (batch: NewEvent[], _delay: number, offered?: HandOff) => {
        statements.push(batch.map((e) => e.id));
        if (gate) await gate.promise;
        if (batch.some((e) => e.storeId === 'st_nope')) throw Object.assign(new Error('fk'), { code: '23503' });
        const leased = offered ? batch.map((e) => ({ id: `del_${e.id}`, eventId: e.id, webhookId: 'wh_1' })) : [];
        return { counts: new Map(batch.map((e) => [e.id, 2])), leased };
      },
    } as unknown as EventRepository;
    const dispatcher = {
      offerSlotsAfterClaim: async () => handOff,
      takeHandOff: (deliveries: unknown[]) => taken.push(deliveries),
    } as unknown as Dispatcher;
    batcher = new PublishBatcher({ retryScheduleMs: [0, 1_000] } as never, events, dispatcher);
  });

  it('writes a publish at rest at once, alone', async () => {
    expect(await batcher.publish(event('e1'))).toBe(2);
    expect(statements).toEqual([['e1']]);
  });

  it('groups the publishes that arrive while a statement is being written into the next one', async () => {
    gate = deferred<void>();
    const first = batcher.publish(event('e1'));
    await Promise.resolve();
    const rest = [batcher.publish(event('e2')), batcher.publish(event('e3'))];
    gate.resolve();
    expect(await Promise.all([first, ...rest])).toEqual([2, 2, 2]);
    expect(statements).toEqual([['e1'], ['e2', 'e3']]);
  });

  it('when a batch fails, writes its events one by one so each publish gets its own answer', async () => {
    gate = deferred<void>();
    const first = batcher.publish(event('e1'));
    await Promise.resolve();
    const good = batcher.publish(event('e2'));
    const bad = batcher.publish(event('e3', 'st_nope'));
    gate.resolve();
    await first;
    expect(await good).toBe(2);
    await expect(bad).rejects.toMatchObject({ code: '23503' });
    expect(statements).toEqual([['e1'], ['e2', 'e3'], ['e2'], ['e3']]);
  });

  it('hands the deliveries of a publish to this process’s worker when it offers slots, and always ends the hand-off', async () => {
    handOff = {
      ...{ limit: 10, leaseMs: 1_000, leaseToken: 'lease', excluded: [], partial: new Map(), perEndpoint: 4 },
      ...{ excludedStores: [], partialStores: new Map(), perStore: 16 },
    };
    await batcher.publish(event('e1'));
    expect(taken).toHaveLength(1);
    expect(taken[0]).toEqual([expect.objectContaining({ id: 'del_e1', body: '{"id":"e1"}', attemptNumber: 1, cycleAttempt: 1 })]);
    await expect(batcher.publish(event('e2', 'st_nope'))).rejects.toThrow('fk');
    expect(taken).toEqual([taken[0], []]);
  });

  it('writes a batch that must commit together at once, in one statement of its own, with the same hand-off', async () => {
    gate = deferred<void>();
    const single = batcher.publish(event('e1'));
    await Promise.resolve();
    handOff = {
      ...{ limit: 10, leaseMs: 1_000, leaseToken: 'lease', excluded: [], partial: new Map(), perEndpoint: 4 },
      ...{ excludedStores: [], partialStores: new Map(), perStore: 16 },
    };
    const batch = batcher.publishAtOnce([event('b1'), event('b2'), event('b3')]);
    const queued = batcher.publish(event('e2'));
    gate.resolve();
    expect([...(await batch).entries()]).toEqual([
      ['b1', 2],
      ['b2', 2],
      ['b3', 2],
    ]);
    await Promise.all([single, queued]);
    // Not queued behind the group commit under way, nor split or joined with other publishes.
    expect(statements).toContainEqual(['b1', 'b2', 'b3']);
    expect(statements.filter((ids) => ids.some((id) => id.startsWith('b')))).toEqual([['b1', 'b2', 'b3']]);
    expect(taken.flat()).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'del_b1', body: '{"id":"b1"}' })]));
  });
});
