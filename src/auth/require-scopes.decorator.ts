import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse, ApiSecurity, ApiTooManyRequestsResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorResponse } from '../common/error-response';
import { API_KEY_SECURITY, PORTAL_SESSION_SECURITY, REQUIRED_SCOPES_EXTENSION } from '../common/swagger';
import { PORTAL_SESSION_SCOPES } from './portal-capabilities';
import type { Scope } from './scopes';

export const REQUIRED_SCOPES = 'hookline:required-scopes';

/**
 * The one auth decorator: the guard requires an API key holding every scope listed (with none
 * listed, any valid key), and the OpenAPI document shows the security requirement, the scopes and
 * the 401/403/429 answers (no 403 where no scope is required). A route whose scopes a portal
 * session can hold also lists the session's bearer token as a way in.
 */
export function RequireScopes(...scopes: Scope[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
    ApiSecurity(API_KEY_SECURITY),
    ...(scopes.every((scope) => PORTAL_SESSION_SCOPES.includes(scope)) ? [ApiSecurity(PORTAL_SESSION_SECURITY)] : []),
    ApiExtension(REQUIRED_SCOPES_EXTENSION, scopes),
    ApiUnauthorizedResponse({
      description: 'X-API-Key missing, unknown or revoked (or a portal session’s token unknown, expired or ended)',
      type: ErrorResponse,
    }),
    ...(scopes.length > 0
      ? [ApiForbiddenResponse({ description: `The key lacks the scope ${scopes.join(', ')}`, type: ErrorResponse })]
      : []),
    ApiTooManyRequestsResponse({
      description: 'Rate limit exceeded',
      type: ErrorResponse,
      headers: { 'Retry-After': { description: 'Seconds to wait before the next request', schema: { type: 'integer' } } },
    }),
  );
}
