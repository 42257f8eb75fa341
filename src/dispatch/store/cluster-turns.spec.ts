import { clusterTurns } from './cluster-turns';

describe('clusterTurns', () => {
  it('starts after the last store served, goes around once, and splits the claim evenly', () => {
    expect(clusterTurns(['st_c', 'st_a', 'st_b', 'st_d'], 'st_b', 32, new Set(), 10)).toEqual({
      turns: [
        { storeId: 'st_c', share: 3 },
        { storeId: 'st_d', share: 3 },
        { storeId: 'st_a', share: 2 },
        { storeId: 'st_b', share: 2 },
      ],
      cut: false,
    });
  });

  it('takes at most the given number of stores, says so, and leaves out stores with no free slot', () => {
    expect(clusterTurns(['st_a', 'st_b', 'st_c'], '', 2, new Set(['st_a']), 5)).toEqual({
      turns: [{ storeId: 'st_b', share: 5 }],
      cut: true,
    });
  });

  it('gives no turn with nothing due or nothing to share', () => {
    expect(clusterTurns([], '', 32, new Set(), 10)).toEqual({ turns: [], cut: false });
    expect(clusterTurns(['st_a', 'st_b'], '', 32, new Set(), 1)).toEqual({ turns: [{ storeId: 'st_a', share: 1 }], cut: false });
  });
});
