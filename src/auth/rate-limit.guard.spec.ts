import { rateLimitMessage } from './rate-limit.guard';

describe('rateLimitMessage', () => {
  it('says the limit is per API key for a request counted against its key', () => {
    expect(rateLimitMessage(6000, 'key:key_01', 42)).toBe(
      'Rate limit exceeded: at most 6000 requests a minute per API key; retry in 42 s (Retry-After)',
    );
  });

  it('says the limit is per portal session for a request of one', () => {
    expect(rateLimitMessage(6000, 'session:ps_01', 3)).toBe(
      'Rate limit exceeded: at most 6000 requests a minute per portal session; retry in 3 s (Retry-After)',
    );
  });

  it('says the limit is per client IP address for a request without a valid key', () => {
    expect(rateLimitMessage(20, 'ip:127.0.0.1', 7)).toBe(
      'Rate limit exceeded: at most 20 requests a minute per client IP address for requests without a valid API key; retry in 7 s (Retry-After)',
    );
    expect(rateLimitMessage(20, 'ip:::1', 7)).toContain('per client IP address');
  });
});
