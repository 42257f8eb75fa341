import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiForbiddenResponse, ApiSecurity, ApiTooManyRequestsResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorResponse } from '../common/error-response';
import { API_KEY_SECURITY } from '../common/swagger';
import type { Scope } from './scopes';

export const REQUIRED_SCOPES = 'hookline:required-scopes';

/**
 * The one auth decorator: the guard requires an API key holding every scope listed, and the
 * OpenAPI document shows the security requirement and the 401/403 answers.
 */
export function RequireScopes(...scopes: Scope[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
    ApiSecurity(API_KEY_SECURITY, scopes),
    ApiUnauthorizedResponse({ description: 'X-API-Key missing, unknown or revoked', type: ErrorResponse }),
    ApiForbiddenResponse({ description: `The key lacks the scope ${scopes.join(', ')}`, type: ErrorResponse }),
    ApiTooManyRequestsResponse({ description: 'Rate limit exceeded; see Retry-After', type: ErrorResponse }),
  );
}
