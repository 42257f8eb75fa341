/** A store's turn in a claim on a Citus cluster: its share of the claim's size. */
export interface ClusterTurn {
  storeId: string;
  share: number;
}

/**
 * The turns of a claim on a Citus cluster, as the one-server claim walks them (docs/scaling.md,
 * "Fair dispatch"): the stores with due work in id order, those after `after` first and then
 * around, at most `stores`, leaving out those with no free slot; `limit` split evenly among them,
 * the first ones getting the remainder. `cut` when stores with due work were left for the next claim.
 */
export function clusterTurns(
  due: readonly string[],
  after: string,
  stores: number,
  excluded: ReadonlySet<string>,
  limit: number,
): { turns: ClusterTurn[]; cut: boolean } {
  const sorted = [...new Set(due)].sort();
  const start = sorted.findIndex((storeId) => storeId > after);
  const around = start < 0 ? sorted : [...sorted.slice(start), ...sorted.slice(0, start)];
  const cut = around.length > stores;
  const chosen = around.slice(0, stores).filter((storeId) => !excluded.has(storeId));
  const base = chosen.length > 0 ? Math.floor(limit / chosen.length) : 0;
  const extra = chosen.length > 0 ? limit % chosen.length : 0;
  return {
    turns: chosen.map((storeId, i) => ({ storeId, share: base + (i < extra ? 1 : 0) })).filter((turn) => turn.share > 0),
    cut,
  };
}
