import { EndpointHealth, MAX_STAMP_INTERVAL_MS } from './endpoint-health';

describe('EndpointHealth', () => {
  it('writes a success once per interval and endpoint', () => {
    const health = new EndpointHealth(10_000);
    expect(health.stampIntervalMs).toBe(1_000);
    expect(health.shouldStamp('wh_a', 0)).toBe(true);
    expect(health.shouldStamp('wh_a', 999)).toBe(false);
    expect(health.shouldStamp('wh_b', 999)).toBe(true);
    expect(health.shouldStamp('wh_a', 1_000)).toBe(true);
  });

  it('writes the next success at once after a failure', () => {
    const health = new EndpointHealth(10_000);
    expect(health.shouldStamp('wh_a', 0)).toBe(true);
    health.failed('wh_a');
    expect(health.shouldStamp('wh_a', 1)).toBe(true);
    expect(health.shouldStamp('wh_a', 2)).toBe(false);
  });

  it('stamps at most once a minute with the default five days', () => {
    expect(new EndpointHealth(5 * 86_400_000).stampIntervalMs).toBe(MAX_STAMP_INTERVAL_MS);
  });

  it('forgets stale endpoints rather than growing without bound', () => {
    const health = new EndpointHealth(10_000);
    for (let i = 0; i < 50_000; i++) health.shouldStamp(`wh_${i}`, 0);
    expect(health.shouldStamp('wh_new', 5_000)).toBe(true);
    // The stale ones were forgotten: they are written again.
    expect(health.shouldStamp('wh_1', 5_000)).toBe(true);
    expect(health.shouldStamp('wh_new', 5_001)).toBe(false);
  });
});
