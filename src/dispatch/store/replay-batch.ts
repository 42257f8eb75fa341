import { idTime } from '../../common/ids';

/** What one replay or retry-failed request takes of its window, and where the next one starts. */
export interface ReplayBatch {
  /** The ids to queue, in order. */
  ids: string[];
  /** The `since` that continues the window, or null when these are all of it. */
  next: Date | null;
}

/**
 * Cuts `candidates` (the window's ids in order, up to `cap` + 1 of them) to at most `cap`. Ids
 * carry their event's millisecond, and a `since` can only name a millisecond, so a cut batch ends
 * where a millisecond does and `next` is the millisecond of the first id left out: continuing from
 * it neither skips an id nor takes one again. Only when more than `cap` ids share one millisecond
 * does a batch end inside it (`cap` of them); they are then taken up again with the rest of it,
 * which a replay skips (they have a delivery now) as retry-failed does (they are pending now).
 */
export function boundBatch(candidates: readonly string[], cap: number): ReplayBatch {
  if (candidates.length <= cap) return { ids: [...candidates], next: null };
  const stopMs = idTime(candidates[cap]) ?? 0;
  let end = cap;
  while (end > 0 && idTime(candidates[end - 1]) === stopMs) end--;
  if (end === 0) end = cap;
  return { ids: candidates.slice(0, end), next: new Date(stopMs) };
}
