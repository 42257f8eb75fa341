import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeysService } from './api-keys.service';
import { Auth, type AuthContext } from './auth-context';
import { MeResponse } from './dto/me.response';
import { RequireScopes } from './require-scopes.decorator';

@ApiTags('api-keys')
@Controller('me')
export class MeController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Get()
  // Any valid key: a client (the dashboard's sign-in) learns what it may do without trying it.
  @RequireScopes()
  @ApiOperation({ summary: 'The calling API key: its id, name, store and scopes (any valid key; no scope needed)' })
  @ApiOkResponse({ type: MeResponse, description: 'The calling key' })
  me(@Auth() auth: AuthContext): Promise<MeResponse> {
    return this.apiKeys.describe(auth);
  }
}
