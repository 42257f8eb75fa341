import { DomainError, DomainErrorKind } from '../common/domain-error';

export enum AuthErrorCode {
  ScopeBeyondCaller = 'scope_beyond_caller',
  StoreNotFound = 'store_not_found',
  ApiKeyNotFound = 'api_key_not_found',
  PortalWebhooksUnknown = 'portal_webhooks_unknown',
  PortalSessionNotFound = 'portal_session_not_found',
  PortalCodeRefused = 'portal_code_refused',
}

/** Why a portal link's code was not exchanged for a session. */
export type RefusedCode = 'unknown' | 'used' | 'expired' | 'revoked';

const REFUSED_CODE: Record<RefusedCode, string> = {
  unknown: 'This portal link is not valid: check that it was copied whole, or ask for a new one',
  used: 'This portal link has already been used: a link signs in once. Ask for a new link',
  expired: 'This portal link has expired: ask for a new link',
  revoked: 'This portal session has been ended: ask for a new link',
};

/** What the store, API key and portal session operations can refuse; the HTTP edge maps the kind to a status. */
export class AuthError extends DomainError<AuthErrorCode> {
  private constructor(code: AuthErrorCode, kind: DomainErrorKind, message: string, problems?: string[]) {
    super(code, kind, message, problems);
  }

  /** A key can grant only scopes it holds itself. */
  static scopeBeyondCaller(missing: string[]): AuthError {
    return new AuthError(
      AuthErrorCode.ScopeBeyondCaller,
      DomainErrorKind.Forbidden,
      `A key can grant only scopes it holds itself; this key lacks ${missing.join(', ')}`,
    );
  }

  static storeNotFound(storeId: string): AuthError {
    return new AuthError(AuthErrorCode.StoreNotFound, DomainErrorKind.NotFound, `Store ${storeId} not found`);
  }

  static apiKeyNotFound(id: string): AuthError {
    return new AuthError(AuthErrorCode.ApiKeyNotFound, DomainErrorKind.NotFound, `API key ${id} not found`);
  }

  /** Ids of `webhookIds` that are no endpoint of the session's store (another store's included). */
  static portalWebhooksUnknown(storeId: string, ids: string[]): AuthError {
    const problems = ids.map((id) => `webhookIds: ${id} is not an endpoint of store ${storeId}`);
    return new AuthError(AuthErrorCode.PortalWebhooksUnknown, DomainErrorKind.Invalid, problems[0], problems);
  }

  static portalSessionNotFound(id: string): AuthError {
    return new AuthError(AuthErrorCode.PortalSessionNotFound, DomainErrorKind.NotFound, `Portal session ${id} not found`);
  }

  static portalCodeRefused(reason: RefusedCode): AuthError {
    return new AuthError(AuthErrorCode.PortalCodeRefused, DomainErrorKind.Unauthenticated, REFUSED_CODE[reason]);
  }
}
