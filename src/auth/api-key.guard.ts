import { CanActivate, ExecutionContext, ForbiddenException, Injectable, NotFoundException, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AuthContext, AuthenticatedRequest } from './auth-context';
import { PUBLIC_ROUTE } from '../common/public.decorator';
import { API_PREFIX } from '../common/api-prefix';
import { sameSecret } from './portal-secrets';
import { RequestAuthenticator } from './request-authenticator';
import { CSRF_HEADER } from './request-credentials';
import { REQUIRED_SCOPES } from './require-scopes.decorator';
import type { Scope } from './scopes';
import { SESSION_ENDPOINTS, type SessionEndpointsRule } from './session-endpoints.decorator';

/** Methods that change nothing: a cookie-authenticated request of these needs no CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Global guard. 401 when the request carries no valid credential: an `X-API-Key`, a portal
 * session's `Authorization: Bearer` token, or a browser's portal session cookie (named by
 * `X-Portal-Session`). 403 when a cookie-authenticated write lacks the session's CSRF token, or
 * when the caller lacks a scope the route requires. A portal session limited to some endpoints
 * reaches only routes that say how they serve it (@SessionEndpoints), and only its own endpoints
 * there (404 for the others). Routes must say what they require: @RequireScopes(...) or @Public().
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: RequestAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const required = this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES, targets);
    if (!required) throw new Error(`${context.getClass().name}.${context.getHandler().name} declares neither @RequireScopes nor @Public`);

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const { context: auth, refusal } = await this.authenticator.authenticate(request);
    if (!auth) throw new UnauthorizedException(refusal);
    request.auth = auth;

    if (auth.portal?.via === 'cookie' && !SAFE_METHODS.has(request.method)) checkCsrf(request, auth.portal.csrfToken);
    const missing = required.filter((scope) => !auth.scopes.includes(scope));
    if (missing.length > 0) {
      throw new ForbiddenException(
        auth.portal
          ? `This portal session lacks the scope ${missing.join(', ')} (its capabilities: ${auth.portal.capabilities.join(', ')})`
          : `This API key lacks the scope ${missing.join(', ')}`,
      );
    }
    if (auth.portal?.webhookIds) {
      checkEndpoints(request, auth, this.reflector.getAllAndOverride<SessionEndpointsRule | undefined>(SESSION_ENDPOINTS, targets));
    }
    return true;
  }
}

function checkCsrf(request: AuthenticatedRequest, expected: string | undefined): void {
  const given = request.headers[CSRF_HEADER];
  if (typeof given !== 'string' || !expected || !sameSecret(given, expected)) {
    throw new ForbiddenException(
      "A request that changes something, signed in by a portal session's cookie, must carry the session's CSRF token in X-CSRF-Token",
    );
  }
}

function checkEndpoints(request: AuthenticatedRequest, auth: AuthContext, rule: SessionEndpointsRule | undefined): void {
  const allowed = auth.portal!.webhookIds!;
  if (rule === 'narrowed' || rule === 'unrelated') return;
  if (rule === undefined) {
    const pattern = (request.route as { path?: unknown } | undefined)?.path;
    const route = (typeof pattern === 'string' ? pattern : request.path).replace(`/${API_PREFIX}`, '');
    throw new ForbiddenException(
      `This portal session is limited to some endpoints (webhookIds): ${request.method} ${route} is not open to it`,
    );
  }
  const id = String(request.params[rule.param]);
  if (!allowed.includes(id)) throw new NotFoundException(`Webhook ${id} not found`);
}
