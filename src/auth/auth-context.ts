import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { PortalBranding, PortalCapability } from './portal-capabilities';
import type { Scope } from './scopes';

/**
 * A portal session calling instead of an API key (docs/api.md#portal-links): by its token
 * (`Authorization: Bearer`) or by the cookie a browser got for the link's one-time code.
 */
export interface PortalContext {
  via: 'token' | 'cookie';
  capabilities: readonly PortalCapability[];
  /** The only endpoints the session may see and act on; null: every endpoint of the store. */
  webhookIds: readonly string[] | null;
  branding: PortalBranding | null;
  expiresAt: Date;
  /** With a cookie only: the token that its writes must carry in X-CSRF-Token. */
  csrfToken?: string;
}

/** Who is calling: the key, its store and its scopes. Every query is scoped by `storeId`. */
export interface AuthContext {
  /** The API key's id, or the portal session's. */
  keyId: string;
  storeId: string;
  scopes: readonly Scope[];
  /** Set when a portal session is calling. */
  portal?: PortalContext;
}

export type AuthenticatedRequest = Request & { auth?: AuthContext };

/**
 * The endpoints the caller may reach: a portal session's `webhookIds`, or undefined for all of its
 * store's (an API key, a session without the limit). Services narrow their answers with it.
 */
export function endpointLimit(auth: AuthContext): readonly string[] | undefined {
  return auth.portal?.webhookIds ?? undefined;
}

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
