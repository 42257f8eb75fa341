import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/api-errors.decorator';
import { ApiKeysService } from './api-keys.service';
import { Auth, type AuthContext, StoreId } from './auth-context';
import { ApiKeyListResponse, CreatedApiKeyResponse } from './dto/api-key.response';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { RequireScopes } from './require-scopes.decorator';

@ApiTags('api-keys')
@Controller('api-keys')
@RequireScopes('api-keys:write')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @ApiOperation({ summary: "Create an API key in the caller's store (the key text is shown once)" })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  @ApiErrors(400)
  create(@Auth() auth: AuthContext, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    return this.apiKeys.create(auth, auth.storeId, dto);
  }

  @Get()
  @ApiOperation({ summary: "List the caller's store's API keys (never their text)" })
  @ApiOkResponse({ type: ApiKeyListResponse })
  list(@StoreId() storeId: string): Promise<ApiKeyListResponse> {
    return this.apiKeys.list(storeId);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key; it stops working at once' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrors(404)
  revoke(@StoreId() storeId: string, @Param('id') id: string): Promise<void> {
    return this.apiKeys.revoke(storeId, id);
  }
}
