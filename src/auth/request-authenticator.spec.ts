import type { ApiKeyAuthenticator } from './api-key-authenticator';
import type { AuthContext } from './auth-context';
import type { PortalSessionAuthenticator } from './portal-session-authenticator';
import { RequestAuthenticator } from './request-authenticator';

const KEY: AuthContext = { keyId: 'key_1', storeId: 'st_a', scopes: ['webhooks:read'] };
const SESSION = 'ps_01jd5v1xkq8w3r0m6m2n4p7s9t';

function authenticator(): { requests: RequestAuthenticator; calls: string[] } {
  const calls: string[] = [];
  const keys = {
    authenticate: (key: string) => {
      calls.push(`key ${key}`);
      return Promise.resolve(key === 'hlk_good' ? KEY : undefined);
    },
  } as unknown as ApiKeyAuthenticator;
  const sessions = {
    byToken: (token: string) => {
      calls.push(`token ${token}`);
      return Promise.resolve({ refusal: 'Invalid portal session token' });
    },
    byCookie: (id: string, secret: string | undefined) => {
      calls.push(`cookie ${id} ${secret}`);
      return Promise.resolve({ refusal: 'not signed in' });
    },
  } as unknown as PortalSessionAuthenticator;
  return { requests: new RequestAuthenticator(keys, sessions), calls };
}

describe('RequestAuthenticator', () => {
  it('asks the authenticator of the credential the request carries', async () => {
    const { requests, calls } = authenticator();
    expect(await requests.authenticate({ headers: { 'x-api-key': 'hlk_good' } })).toEqual({ context: KEY });
    expect(await requests.authenticate({ headers: { 'x-api-key': 'hlk_bad' } })).toEqual({ refusal: 'Invalid API key' });
    expect(await requests.authenticate({ headers: { authorization: 'Bearer hlp_x' } })).toEqual({
      refusal: 'Invalid portal session token',
    });
    expect(await requests.authenticate({ headers: { 'x-portal-session': SESSION, cookie: `hookline_portal_${SESSION}=s` } })).toEqual({
      refusal: 'not signed in',
    });
    expect(await requests.authenticate({ headers: {} })).toEqual({ refusal: 'Missing X-API-Key header' });
    expect(calls).toEqual(['key hlk_good', 'key hlk_bad', 'token hlp_x', `cookie ${SESSION} s`]);
  });

  it('looks a request up once, however many guards ask', async () => {
    const { requests, calls } = authenticator();
    const request = { headers: { 'x-api-key': 'hlk_good' } };
    await Promise.all([requests.authenticate(request), requests.authenticate(request)]);
    expect(await requests.authenticate(request)).toEqual({ context: KEY });
    expect(calls).toEqual(['key hlk_good']);
  });

  it('does not ask for a key too long to be one', async () => {
    const { requests, calls } = authenticator();
    expect(await requests.authenticate({ headers: { 'x-api-key': 'k'.repeat(600) } })).toEqual({ refusal: 'Invalid API key' });
    expect(calls).toEqual([]);
  });
});
