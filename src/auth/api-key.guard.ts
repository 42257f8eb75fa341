import { CanActivate, ExecutionContext, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import type { AuthenticatedRequest } from './auth-context';
import { PUBLIC_ROUTE } from '../common/public.decorator';
import { REQUIRED_SCOPES } from './require-scopes.decorator';
import type { Scope } from './scopes';

/**
 * Global guard: 401 when X-API-Key is missing, unknown or revoked; 403 when the key lacks a scope
 * the route requires. Routes must say which: @RequireScopes(...) or @Public().
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const required = this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES, targets);
    if (!required) throw new Error(`${context.getClass().name}.${context.getHandler().name} declares neither @RequireScopes nor @Public`);

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (!request.headers['x-api-key']) throw new UnauthorizedException('Missing X-API-Key header');
    const auth = await this.authenticator.authenticateRequest(request);
    if (!auth) throw new UnauthorizedException('Invalid API key');
    request.auth = auth;

    const missing = required.filter((scope) => !auth.scopes.includes(scope));
    if (missing.length > 0) throw new ForbiddenException(`This API key lacks the scope ${missing.join(', ')}`);
    return true;
  }
}
