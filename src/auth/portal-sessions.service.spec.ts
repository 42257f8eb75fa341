import { loadConfig } from '../config/app-config';
import { AuthError } from './auth.errors';
import type { AuthContext } from './auth-context';
import { EndpointDirectory } from './endpoint-directory';
import { hashPortalSecret } from './portal-secrets';
import type { NewPortalSession, PortalSessionRepository, PortalSessionState } from './portal-session.repository';
import { PortalSessionsService } from './portal-sessions.service';
import type { StoreRepository } from './store.repository';

const EXPIRES = new Date(Date.now() + 3_600_000);
const CALLER: AuthContext = { keyId: 'key_1', storeId: 'st_a', scopes: ['portal:write', 'webhooks:read'] };

function setup(found: Partial<PortalSessionState & { codeUsed: boolean }> | undefined = undefined) {
  const inserted: NewPortalSession[] = [];
  const repository = {
    purgeEnded: () => Promise.resolve(),
    insert: (session: NewPortalSession) => {
      inserted.push(session);
      return Promise.resolve({ expiresAt: EXPIRES });
    },
    exchangeCode: () => Promise.resolve(undefined),
    findByCode: () => Promise.resolve(found),
  } as unknown as PortalSessionRepository;
  const stores = { exists: (id: string) => Promise.resolve(id === 'st_b') } as unknown as StoreRepository;
  const directory = new EndpointDirectory();
  directory.register((_storeId, ids) => Promise.resolve(ids.filter((id) => id.startsWith('wh_mine'))));
  const config = loadConfig({ NODE_ENV: 'test', PUBLIC_URL: 'https://hooks.example.com/' });
  return { service: new PortalSessionsService(config, repository, stores, directory), inserted };
}

describe('PortalSessionsService', () => {
  it('makes a link under PUBLIC_URL with the code in its fragment, and stores only the hashes', async () => {
    const { service, inserted } = setup();
    const created = await service.create(CALLER, 'st_a', { capabilities: ['read'], branding: { accentColor: '#0A7D5A' } });
    const code = created.url.replace('https://hooks.example.com/dashboard#portal=', '');
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(inserted).toEqual([
      {
        id: created.id,
        storeId: 'st_a',
        capabilities: ['read'],
        webhookIds: null,
        branding: { accentColor: '#0a7d5a' },
        tokenHash: hashPortalSecret(created.token),
        codeHash: hashPortalSecret(code),
        expiresInSeconds: 3600,
      },
    ]);
    expect(created.expiresAt).toBe(EXPIRES.toISOString());
  });

  it('hands out only what the caller may do, in a store that exists, with endpoints of that store', async () => {
    const { service, inserted } = setup();
    await expect(service.create(CALLER, 'st_a', { capabilities: ['read', 'manage'] })).rejects.toThrow(
      'A key can grant only scopes it holds itself; this key lacks webhooks:write',
    );
    await expect(service.create(CALLER, 'st_nope', { capabilities: ['read'] })).rejects.toThrow('Store st_nope not found');
    const error = await service
      .create(CALLER, 'st_a', { capabilities: ['read'], webhookIds: ['wh_mine1', 'wh_x', 'wh_y'] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).problems).toEqual([
      'webhookIds: wh_x is not an endpoint of store st_a',
      'webhookIds: wh_y is not an endpoint of store st_a',
    ]);
    expect(inserted).toEqual([]);
    await service.create(CALLER, 'st_b', { capabilities: ['read'], webhookIds: ['wh_mine1'], expiresInSeconds: 60 });
    expect(inserted[0]).toMatchObject({ storeId: 'st_b', webhookIds: ['wh_mine1'], expiresInSeconds: 60 });
  });

  it.each([
    [undefined, 'This portal link is not valid: check that it was copied whole, or ask for a new one'],
    [{ ended: null, codeUsed: true }, 'This portal link has already been used: a link signs in once. Ask for a new link'],
    [{ ended: 'expired' as const, codeUsed: false }, 'This portal link has expired: ask for a new link'],
    [{ ended: 'revoked' as const, codeUsed: true }, 'This portal session has been ended: ask for a new link'],
  ])('refuses a code it cannot exchange, saying why (%j)', async (found, message) => {
    const { service } = setup(found);
    await expect(service.exchange('code')).rejects.toThrow(message);
  });
});
