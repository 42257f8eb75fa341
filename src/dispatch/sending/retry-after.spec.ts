import { retryAfterMs } from './retry-after';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-25T12:00:00.000Z');

  it('reads delay-seconds', () => {
    expect(retryAfterMs('2', now)).toBe(2_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs(['120', '5'], now)).toBe(120_000);
  });

  it('reads an HTTP date as the time left until it, 0 when it has passed', () => {
    expect(retryAfterMs('Wed, 25 Nov 2026 12:00:03 GMT', now)).toBe(3_000);
    expect(retryAfterMs('Wed, 25 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('ignores anything else', () => {
    for (const bad of ['', '-1', '1.5', 'soon', '2026-11-25T12:00:03Z', 'Wed, 25 Nov 2026 12:00:03']) {
      expect(retryAfterMs(bad, now)).toBeUndefined();
    }
  });
});
