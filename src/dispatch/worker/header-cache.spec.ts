import type { SendableHeaders } from '../../webhooks/webhooks.service';
import { HeaderCache } from './header-cache';

describe('HeaderCache', () => {
  let reads: string[][];
  let stored: Map<string, SendableHeaders>;
  let failNext: boolean;
  let cache: HeaderCache;

  beforeEach(() => {
    reads = [];
    failNext = false;
    stored = new Map<string, SendableHeaders>([
      ['wh_1', { revision: 'r1', headers: { Authorization: 'Bearer 1' } }],
      ['wh_2', { revision: 'r2', headers: { 'X-Store': 'b' } }],
    ]);
    cache = new HeaderCache(async (ids) => {
      reads.push([...ids]);
      if (failNext) {
        failNext = false;
        throw new Error('connection lost');
      }
      return new Map(ids.filter((id) => stored.has(id)).map((id) => [id, stored.get(id)!]));
    }, 3);
  });

  it('answers an endpoint without headers with none, reading nothing', async () => {
    await expect(cache.headersOf('wh_1', null)).resolves.toEqual({ revision: '', headers: {} });
    expect(reads).toEqual([]);
  });

  it('reads an endpoint once per revision, and again when a claim shows another', async () => {
    await expect(cache.headersOf('wh_1', 'r1')).resolves.toMatchObject({ headers: { Authorization: 'Bearer 1' } });
    await cache.headersOf('wh_1', 'r1');
    expect(reads).toEqual([['wh_1']]);
    stored.set('wh_1', { revision: 'r9', headers: { Authorization: 'Bearer 2' } });
    await expect(cache.headersOf('wh_1', 'r9')).resolves.toMatchObject({ headers: { Authorization: 'Bearer 2' } });
    expect(reads).toEqual([['wh_1'], ['wh_1']]);
  });

  it('reads the misses of one claim together, each endpoint once', async () => {
    const first = cache.headersOf('wh_0', 'r0');
    const rest = [cache.headersOf('wh_1', 'r1'), cache.headersOf('wh_2', 'r2'), cache.headersOf('wh_1', 'r1')];
    await Promise.all([first, ...rest]);
    // Each endpoint read once, in at most as many statements as may be out at once plus one.
    expect(reads.flat().sort()).toEqual(['wh_0', 'wh_1', 'wh_2']);
    expect(reads.length).toBeLessThanOrEqual(3);
    await expect(first).resolves.toBeUndefined();
  });

  it('forgets a failed read, so that the next attempt reads again', async () => {
    failNext = true;
    await expect(cache.headersOf('wh_1', 'r1')).rejects.toThrow('connection lost');
    await expect(cache.headersOf('wh_1', 'r1')).resolves.toMatchObject({ headers: { Authorization: 'Bearer 1' } });
    expect(reads).toHaveLength(2);
  });

  it('holds at most its capacity of endpoints', async () => {
    for (const id of ['wh_1', 'wh_2', 'wh_3', 'wh_4']) await cache.headersOf(id, 'r');
    await cache.headersOf('wh_1', 'r');
    expect(reads).toHaveLength(5);
  });

  it('lets the least recently used endpoint go when full, and keeps the others', async () => {
    for (const id of ['wh_1', 'wh_2', 'wh_3', 'wh_1', 'wh_4', 'wh_1', 'wh_4']) await cache.headersOf(id, 'r');
    expect(reads).toHaveLength(4);
  });
});
