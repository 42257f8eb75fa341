import { FixedWindowThrottlerStorage } from './rate-limit-storage';

describe('FixedWindowThrottlerStorage', () => {
  afterEach(() => jest.useRealTimers());

  it('counts hits per key in a window and blocks above the limit until the window ends', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const storage = new FixedWindowThrottlerStorage();
    for (let i = 1; i <= 3; i++) {
      expect(await storage.increment('key:a', 60_000, 3, 60_000)).toMatchObject({ totalHits: i, isBlocked: false });
    }
    const blocked = await storage.increment('key:a', 60_000, 3, 60_000);
    expect(blocked).toMatchObject({ isBlocked: true, timeToBlockExpire: 60 });
    expect(await storage.increment('key:b', 60_000, 3, 60_000)).toMatchObject({ totalHits: 1, isBlocked: false });

    jest.setSystemTime(1_000_000 + 30_000);
    expect(await storage.increment('key:a', 60_000, 3, 60_000)).toMatchObject({ isBlocked: true, timeToBlockExpire: 30 });

    jest.setSystemTime(1_000_000 + 60_001);
    expect(await storage.increment('key:a', 60_000, 3, 60_000)).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('keeps counting past 125,000 hits in a window (where a spread list of hits would throw)', async () => {
    const storage = new FixedWindowThrottlerStorage();
    for (let i = 0; i < 200_000; i++) await storage.increment('key:busy', 60_000, 10_000_000, 0);
    expect(await storage.increment('key:busy', 60_000, 10_000_000, 0)).toMatchObject({ totalHits: 200_001, isBlocked: false });
  });
});
