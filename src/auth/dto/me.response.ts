import { ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { ApiKeyResponse } from './api-key.response';
import { PortalSessionResponse } from './portal-session.response';

/**
 * The caller: who it is, which store it acts in and what it may do. For a portal session, `id` is
 * the session's, `name` its branding's name (or "Portal session"), and `portalSession` describes it.
 */
export class MeResponse extends PickType(ApiKeyResponse, ['id', 'name', 'storeId', 'scopes'] as const) {
  @ApiPropertyOptional({ type: PortalSessionResponse, description: 'Present when a portal session is calling' })
  portalSession?: PortalSessionResponse;
}
