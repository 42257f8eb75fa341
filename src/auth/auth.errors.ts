import { DomainError, DomainErrorKind } from '../common/domain-error';

export enum AuthErrorCode {
  ScopeBeyondCaller = 'scope_beyond_caller',
  StoreNotFound = 'store_not_found',
  ApiKeyNotFound = 'api_key_not_found',
}

/** What the store and API key operations can refuse; the HTTP edge maps the kind to a status. */
export class AuthError extends DomainError<AuthErrorCode> {
  private constructor(code: AuthErrorCode, kind: DomainErrorKind, message: string) {
    super(code, kind, message);
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
}
