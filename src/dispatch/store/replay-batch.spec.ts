import { idFloor, newId } from '../../common/ids';
import { boundBatch } from './replay-batch';

const T = Date.parse('2026-11-25T10:00:00.000Z');
/** `count` ids made at `T + ms`, in order. */
const at = (ms: number, count = 1): string[] => Array.from({ length: count }, () => newId('evt', T + ms)).sort();

describe('boundBatch', () => {
  it('takes the whole window when it fits, with nothing to continue', () => {
    const ids = [...at(0), ...at(1), ...at(2)];
    expect(boundBatch(ids, 3)).toEqual({ ids, next: null });
    expect(boundBatch([], 3)).toEqual({ ids: [], next: null });
  });

  it('stops at the cap, continuing at the millisecond of the first id left out', () => {
    const ids = [...at(0), ...at(1), ...at(2), ...at(3)];
    expect(boundBatch(ids, 3)).toEqual({ ids: ids.slice(0, 3), next: new Date(T + 3) });
  });

  it('ends a cut batch where a millisecond ends, so that the next request starts at a whole one', () => {
    const ids = [...at(0), ...at(1), ...at(5, 3)];
    // The cap falls inside millisecond 5: its ids are all left to the next request.
    expect(boundBatch(ids, 3)).toEqual({ ids: ids.slice(0, 2), next: new Date(T + 5) });
  });

  it('cuts inside a millisecond only when more than the cap share it', () => {
    const ids = at(7, 5);
    expect(boundBatch(ids, 3)).toEqual({ ids: ids.slice(0, 3), next: new Date(T + 7) });
  });

  it('continues every window exactly once, whatever the cap', () => {
    const window = [...at(0, 2), ...at(1), ...at(2, 4), ...at(3), ...at(9, 2)];
    for (const cap of [1, 2, 3, 5, 13]) {
      const taken: string[] = [];
      let since = T;
      for (let round = 0; round < 20; round++) {
        // What the next request finds: the window from `since` on, less what is already queued.
        const candidates = window.filter((id) => id >= idFloor('evt', since) && !taken.includes(id)).slice(0, cap + 1);
        const batch = boundBatch(candidates, cap);
        expect(batch.ids.length).toBeLessThanOrEqual(cap);
        taken.push(...batch.ids);
        if (!batch.next) break;
        since = batch.next.getTime();
      }
      expect(taken).toEqual(window);
    }
  });
});
