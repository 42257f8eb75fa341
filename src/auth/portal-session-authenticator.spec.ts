import { PortalSessionAuthenticator } from './portal-session-authenticator';
import { csrfTokenFor, hashPortalSecret } from './portal-secrets';
import type { PortalSessionRepository, PortalSessionState } from './portal-session.repository';

const EXPIRES = new Date('2026-11-22T11:00:00.000Z');

function state(overrides: Partial<PortalSessionState> = {}): PortalSessionState {
  return {
    id: 'ps_1',
    storeId: 'st_a',
    capabilities: ['read'],
    webhookIds: null,
    branding: null,
    expiresAt: EXPIRES,
    ended: null,
    ...overrides,
  };
}

/** A repository holding one session, found by its token's hash or by its id and cookie's hash. */
function authenticatorOf(session: PortalSessionState, token = 'hlp_t', cookie = 'c00kie'): PortalSessionAuthenticator {
  const repository = {
    findByToken: (hash: string) => Promise.resolve(hash === hashPortalSecret(token) ? session : undefined),
    findByCookie: (id: string, hash: string) =>
      Promise.resolve(id === session.id && hash === hashPortalSecret(cookie) ? session : undefined),
  } as unknown as PortalSessionRepository;
  return new PortalSessionAuthenticator(repository);
}

describe('PortalSessionAuthenticator', () => {
  it('turns a token into the session’s store, scopes and limits', async () => {
    const manage = authenticatorOf(state({ capabilities: ['read', 'manage'], webhookIds: ['wh_1'], branding: { name: 'Acme' } }));
    expect(await manage.byToken('hlp_t')).toEqual({
      context: {
        keyId: 'ps_1',
        storeId: 'st_a',
        scopes: ['webhooks:read', 'webhooks:write'],
        portal: { via: 'token', capabilities: ['read', 'manage'], webhookIds: ['wh_1'], branding: { name: 'Acme' }, expiresAt: EXPIRES },
      },
    });
    expect((await authenticatorOf(state()).byToken('hlp_t')).context?.scopes).toEqual(['webhooks:read']);
  });

  it('turns a cookie into the session, with the CSRF token its writes need', async () => {
    const result = await authenticatorOf(state()).byCookie('ps_1', 'c00kie');
    expect(result.context?.portal).toMatchObject({ via: 'cookie', csrfToken: csrfTokenFor('c00kie') });
  });

  it('refuses a wrong token, a wrong or missing cookie, and says why an ended session is refused', async () => {
    const authenticator = authenticatorOf(state());
    expect(await authenticator.byToken('hlp_other')).toEqual({ refusal: 'Invalid portal session token' });
    expect(await authenticator.byToken('')).toEqual({ refusal: 'Invalid portal session token' });
    for (const [id, cookie] of [
      ['ps_1', 'wrong'],
      ['ps_2', 'c00kie'],
      ['ps_1', undefined],
      ['', 'c00kie'],
    ] as const) {
      expect((await authenticator.byCookie(id, cookie)).refusal).toMatch(/^This browser is not signed in to this portal session/);
    }
    expect(await authenticatorOf(state({ ended: 'revoked' })).byToken('hlp_t')).toEqual({
      refusal: 'This portal session has been ended: ask for a new link',
    });
    expect(await authenticatorOf(state({ ended: 'expired' })).byCookie('ps_1', 'c00kie')).toEqual({
      refusal: 'This portal session expired at 2026-11-22T11:00:00.000Z: ask for a new link',
    });
  });
});
