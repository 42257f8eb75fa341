import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeysService } from './api-keys.service';
import { Auth, type AuthContext } from './auth-context';
import { MeResponse } from './dto/me.response';
import { PortalSessionsService } from './portal-sessions.service';
import { RequireScopes } from './require-scopes.decorator';
import { SessionEndpoints } from './session-endpoints.decorator';

@ApiTags('api-keys')
@Controller('me')
export class MeController {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly portalSessions: PortalSessionsService,
  ) {}

  @Get()
  // Any valid key: a client (the dashboard's sign-in) learns what it may do without trying it.
  @RequireScopes()
  @SessionEndpoints('unrelated')
  @ApiOperation({
    summary: 'The caller: its id, name, store and scopes (any valid key or portal session; no scope needed)',
    description:
      'A portal session also gets `portalSession`: its capabilities, endpoints, branding, expiry and, signed in by a cookie, its CSRF token.',
  })
  @ApiOkResponse({ type: MeResponse, description: 'The caller' })
  async me(@Auth() auth: AuthContext): Promise<MeResponse> {
    if (!auth.portal) return this.apiKeys.describe(auth);
    const session = this.portalSessions.describe({ ...auth, portal: auth.portal });
    return {
      id: auth.keyId,
      name: auth.portal.branding?.name ?? 'Portal session',
      storeId: auth.storeId,
      scopes: [...auth.scopes],
      portalSession: session,
    };
  }
}
