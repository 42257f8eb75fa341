import { ForbiddenException, NotFoundException, UnauthorizedException, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Public } from '../common/public.decorator';
import { ApiKeyGuard } from './api-key.guard';
import type { AuthContext, PortalContext } from './auth-context';
import type { Authentication } from './portal-session-authenticator';
import type { RequestAuthenticator } from './request-authenticator';
import { RequireScopes } from './require-scopes.decorator';
import { SessionEndpoints } from './session-endpoints.decorator';

/** Route handlers carrying the metadata the controllers give theirs. */
class Routes {
  @Public() health(): void {}
  @RequireScopes('webhooks:read') @SessionEndpoints('narrowed') list(): void {}
  @RequireScopes('webhooks:write') create(): void {}
  @RequireScopes('webhooks:write') @SessionEndpoints({ param: 'id' }) update(): void {}
  @RequireScopes('webhooks:read') @SessionEndpoints({ param: 'id' }) get(): void {}
  @RequireScopes() @SessionEndpoints('unrelated') me(): void {}
  @RequireScopes('api-keys:write') keys(): void {}
  undeclared(): void {}
}

interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  params: Record<string, string>;
  route?: { path: string };
  auth?: AuthContext;
}

const KEY: AuthContext = { keyId: 'key_1', storeId: 'st_a', scopes: ['webhooks:read', 'webhooks:write'] };

function session(
  portal: Partial<PortalContext> & Pick<PortalContext, 'via'>,
  scopes: AuthContext['scopes'] = ['webhooks:read'],
): AuthContext {
  return {
    keyId: 'ps_1',
    storeId: 'st_a',
    scopes,
    portal: {
      capabilities: scopes.includes('webhooks:write') ? ['read', 'manage'] : ['read'],
      webhookIds: null,
      branding: null,
      expiresAt: new Date(),
      ...portal,
    },
  };
}

function contextOf(handler: keyof Routes, request: FakeRequest): ExecutionContext {
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
}

function guardAnswering(authentication: Authentication): { guard: ApiKeyGuard; calls: () => number } {
  let calls = 0;
  const authenticator = {
    authenticate: () => {
      calls++;
      return Promise.resolve(authentication);
    },
  } as unknown as RequestAuthenticator;
  return { guard: new ApiKeyGuard(new Reflector(), authenticator), calls: () => calls };
}

function request(method: string, extra: Partial<FakeRequest> = {}): FakeRequest {
  return { method, path: '/api/v1/external/webhooks', headers: {}, params: {}, ...extra };
}

async function refusal(guard: ApiKeyGuard, handler: keyof Routes, req: FakeRequest): Promise<unknown> {
  return guard.canActivate(contextOf(handler, req)).then(
    () => 'allowed',
    (error: unknown) => error,
  );
}

describe('ApiKeyGuard', () => {
  it('lets a public route through without asking for a credential', async () => {
    const { guard, calls } = guardAnswering({ refusal: 'Missing X-API-Key header' });
    expect(await guard.canActivate(contextOf('health', request('GET')))).toBe(true);
    expect(calls()).toBe(0);
  });

  it('refuses to serve a route that declares neither @RequireScopes nor @Public', async () => {
    const { guard } = guardAnswering({ context: KEY });
    await expect(guard.canActivate(contextOf('undeclared', request('GET')))).rejects.toThrow('declares neither @RequireScopes nor @Public');
  });

  it("answers 401 with the authenticator's reason when no credential is accepted", async () => {
    const { guard } = guardAnswering({ refusal: 'This portal session has been ended: ask for a new link' });
    const error = await refusal(guard, 'list', request('GET'));
    expect(error).toBeInstanceOf(UnauthorizedException);
    expect((error as Error).message).toBe('This portal session has been ended: ask for a new link');
  });

  it('sets the caller on the request, and answers 403 naming the scope a key lacks', async () => {
    const req = request('GET');
    const { guard } = guardAnswering({ context: KEY });
    expect(await guard.canActivate(contextOf('list', req))).toBe(true);
    expect(req.auth).toBe(KEY);
    const error = await refusal(guard, 'keys', request('GET'));
    expect(error).toBeInstanceOf(ForbiddenException);
    expect((error as Error).message).toBe('This API key lacks the scope api-keys:write');
  });

  it("answers a read session's write 403, by token and by cookie", async () => {
    const byToken = guardAnswering({ context: session({ via: 'token' }) }).guard;
    const error = await refusal(byToken, 'update', request('PUT', { params: { id: 'wh_1' } }));
    expect(error).toBeInstanceOf(ForbiddenException);
    expect((error as Error).message).toBe('This portal session lacks the scope webhooks:write (its capabilities: read)');
    const byCookie = guardAnswering({ context: session({ via: 'cookie', csrfToken: 'csrf' }) }).guard;
    const withCsrf = request('PUT', { params: { id: 'wh_1' }, headers: { 'x-csrf-token': 'csrf' } });
    expect((await refusal(byCookie, 'update', withCsrf)) as Error).toBeInstanceOf(ForbiddenException);
  });

  it("requires the session's CSRF token on a cookie-authenticated write, not on a read or by token", async () => {
    const manage = session({ via: 'cookie', csrfToken: 'the-csrf' }, ['webhooks:read', 'webhooks:write']);
    const { guard } = guardAnswering({ context: manage });
    for (const headers of [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': 'the-csr' }] as Array<Record<string, string>>) {
      const error = await refusal(guard, 'create', request('POST', { headers }));
      expect(error).toBeInstanceOf(ForbiddenException);
      expect((error as Error).message).toContain('X-CSRF-Token');
    }
    expect(await refusal(guard, 'create', request('POST', { headers: { 'x-csrf-token': 'the-csrf' } }))).toBe('allowed');
    expect(await refusal(guard, 'list', request('GET'))).toBe('allowed');
    const byToken = guardAnswering({ context: session({ via: 'token' }, ['webhooks:read', 'webhooks:write']) }).guard;
    expect(await refusal(byToken, 'create', request('POST'))).toBe('allowed');
  });

  describe('a session limited to some endpoints', () => {
    const limited = session({ via: 'token', webhookIds: ['wh_mine'] }, ['webhooks:read', 'webhooks:write']);
    const { guard } = guardAnswering({ context: limited });

    it('reaches its own endpoints, and gets 404 for any other, as for an id that does not exist', async () => {
      expect(await refusal(guard, 'get', request('GET', { params: { id: 'wh_mine' } }))).toBe('allowed');
      const error = await refusal(guard, 'update', request('PUT', { params: { id: 'wh_other' } }));
      expect(error).toBeInstanceOf(NotFoundException);
      expect((error as Error).message).toBe('Webhook wh_other not found');
    });

    it('reaches routes that narrow their answer or concern no endpoint', async () => {
      expect(await refusal(guard, 'list', request('GET'))).toBe('allowed');
      expect(await refusal(guard, 'me', request('GET'))).toBe('allowed');
    });

    it('is refused every route that does not say how it serves such a session: creating an endpoint, for one', async () => {
      const error = await refusal(guard, 'create', request('POST', { route: { path: '/api/v1/external/webhooks' } }));
      expect(error).toBeInstanceOf(ForbiddenException);
      expect((error as Error).message).toBe(
        'This portal session is limited to some endpoints (webhookIds): POST /webhooks is not open to it',
      );
    });
  });

  it('does not limit a session without webhookIds, nor a key, to routes that declare @SessionEndpoints', async () => {
    const all = session({ via: 'token' }, ['webhooks:read', 'webhooks:write']);
    expect(await refusal(guardAnswering({ context: all }).guard, 'create', request('POST'))).toBe('allowed');
    expect(await refusal(guardAnswering({ context: KEY }).guard, 'create', request('POST'))).toBe('allowed');
  });
});
