import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { Scope } from './scopes';

/** Who is calling: the key, its store and its scopes. Every query is scoped by `storeId`. */
export interface AuthContext {
  keyId: string;
  storeId: string;
  scopes: readonly Scope[];
}

export type AuthenticatedRequest = Request & { auth?: AuthContext };

/** The caller's {@link AuthContext}, set by the API key guard. */
export const Auth = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthContext => {
  const auth = ctx.switchToHttp().getRequest<AuthenticatedRequest>().auth;
  if (!auth) throw new Error('@Auth() used on a route without @RequireScopes()');
  return auth;
});

/** The caller's store id. */
export const StoreId = createParamDecorator((_data: unknown, ctx: ExecutionContext): string => {
  const auth = ctx.switchToHttp().getRequest<AuthenticatedRequest>().auth;
  if (!auth) throw new Error('@StoreId() used on a route without @RequireScopes()');
  return auth.storeId;
});
