import type { ReceiverAccess } from '../../webhooks/receiver-credentials';
import { OAuth2TokenCache, type IssuedToken } from './oauth2-token-cache';

describe('OAuth2TokenCache', () => {
  const access = (version = 'v1', endpointId = 'wh_1'): ReceiverAccess => ({
    endpointId,
    version,
    auth: { type: 'oauth2', tokenUrl: 'https://auth.example/token', clientId: 'c', clientSecret: 's' },
  });
  let now: number;
  let requests: number;
  let answer: () => Promise<IssuedToken>;
  let cache: OAuth2TokenCache;

  beforeEach(() => {
    now = 1_000_000;
    requests = 0;
    answer = () => Promise.resolve({ accessToken: `t${requests}`, expiresIn: 300 });
    cache = new OAuth2TokenCache(
      () => {
        requests++;
        return answer();
      },
      () => now,
      2_000,
    );
  });

  it('fetches one token for many concurrent askers (single flight)', async () => {
    let release!: () => void;
    answer = () => new Promise((resolve) => (release = () => resolve({ accessToken: 'shared', expiresIn: 300 })));
    const asked = Array.from({ length: 50 }, () => cache.token(access()));
    release();
    expect(new Set(await Promise.all(asked))).toEqual(new Set(['shared']));
    expect(requests).toBe(1);
    await expect(cache.token(access())).resolves.toBe('shared');
    expect(requests).toBe(1);
  });

  it('lets the least recently used endpoint’s token go when full, and keeps the others', async () => {
    const small = new OAuth2TokenCache(
      () => {
        requests++;
        return answer();
      },
      () => now,
      2_000,
      2,
    );
    for (const endpoint of ['wh_1', 'wh_2', 'wh_1', 'wh_3', 'wh_1', 'wh_3']) await small.token(access('v1', endpoint));
    expect(requests).toBe(3);
    await small.token(access('v1', 'wh_2'));
    expect(requests).toBe(4);
  });

  it('keeps a token until shortly before expires_in, then fetches a new one', async () => {
    await expect(cache.token(access())).resolves.toBe('t1');
    now += 269_999; // 300 s less a tenth (under the 60 s margin) is 270 s
    await expect(cache.token(access())).resolves.toBe('t1');
    now += 1;
    await expect(cache.token(access())).resolves.toBe('t2');
    expect(requests).toBe(2);
  });

  it('renews a short-lived token a tenth of its life early', async () => {
    answer = () => Promise.resolve({ accessToken: `t${requests}`, expiresIn: 2 });
    await cache.token(access());
    now += 1_799;
    await expect(cache.token(access())).resolves.toBe('t1');
    now += 1;
    await expect(cache.token(access())).resolves.toBe('t2');
  });

  it('fetches again once after a 401, however many attempts were refused', async () => {
    const token = await cache.token(access());
    for (let i = 0; i < 5; i++) cache.refused(access(), token);
    const next = await Promise.all([cache.token(access()), cache.token(access())]);
    expect(next).toEqual(['t2', 't2']);
    // A late 401 to the old token does not throw away the new one.
    cache.refused(access(), token);
    await expect(cache.token(access())).resolves.toBe('t2');
    expect(requests).toBe(2);
  });

  it('shares a failure for a moment, then asks again', async () => {
    answer = () => Promise.reject(new Error('OAuth2 token request failed: HTTP 401 from token URL'));
    await expect(cache.token(access())).rejects.toThrow('HTTP 401 from token URL');
    await expect(cache.token(access())).rejects.toThrow('HTTP 401 from token URL');
    expect(requests).toBe(1);
    now += 2_000;
    answer = () => Promise.resolve({ accessToken: 'fixed' });
    await expect(cache.token(access())).resolves.toBe('fixed');
    expect(requests).toBe(2);
  });

  it('starts afresh when the credentials change, and keeps endpoints apart', async () => {
    await expect(cache.token(access('v1'))).resolves.toBe('t1');
    await expect(cache.token(access('v2'))).resolves.toBe('t2');
    await expect(cache.token(access('v2', 'wh_2'))).resolves.toBe('t3');
    await expect(cache.token(access('v2'))).resolves.toBe('t2');
  });

  it('keeps a token without expires_in for an hour', async () => {
    answer = () => Promise.resolve({ accessToken: `t${requests}` });
    await cache.token(access());
    now += 59 * 60_000 - 1; // an hour less the 60 s margin
    await expect(cache.token(access())).resolves.toBe('t1');
    now += 1;
    await expect(cache.token(access())).resolves.toBe('t2');
  });
});
