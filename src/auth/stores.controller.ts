import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/api-errors.decorator';
import { PageOf, PageQueryDto, type Page } from '../common/pagination';
import { ApiKeysService } from './api-keys.service';
import { Auth, type AuthContext } from './auth-context';
import { CreatedApiKeyResponse } from './dto/api-key.response';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { CreatePortalSessionDto } from './dto/create-portal-session.dto';
import { CreateStoreDto } from './dto/create-store.dto';
import { CreatedPortalSessionResponse } from './dto/portal-session.response';
import { StoreResponse } from './dto/store.response';
import { CREATE_PORTAL_SESSION_DESCRIPTION } from './portal-sessions.controller';
import { PortalSessionsService } from './portal-sessions.service';
import { RequireScopes } from './require-scopes.decorator';
import { StoresService } from './stores.service';

const StorePage = PageOf(StoreResponse, 'StorePage');

@ApiTags('stores')
@Controller('stores')
@RequireScopes('stores:write')
export class StoresController {
  constructor(
    private readonly stores: StoresService,
    private readonly apiKeys: ApiKeysService,
    private readonly portalSessions: PortalSessionsService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a store (platform administrator)' })
  @ApiCreatedResponse({ type: StoreResponse })
  @ApiErrors(400)
  create(@Body() dto: CreateStoreDto): Promise<StoreResponse> {
    return this.stores.create(dto.name);
  }

  @Get()
  @ApiOperation({ summary: 'List stores, newest first' })
  @ApiOkResponse({ type: StorePage })
  @ApiErrors(400)
  list(@Query() query: PageQueryDto): Promise<Page<StoreResponse>> {
    return this.stores.list(query);
  }

  @Post(':id/api-keys')
  @ApiOperation({ summary: 'Create an API key in any store (the key text is shown once)' })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  @ApiErrors(400, 404)
  createKey(@Auth() auth: AuthContext, @Param('id') storeId: string, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    return this.apiKeys.create(auth, storeId, dto);
  }

  @Post(':id/portal-sessions')
  @ApiOperation({
    summary: 'Create a portal session of any store (the link and token are shown once)',
    description: CREATE_PORTAL_SESSION_DESCRIPTION,
  })
  @ApiCreatedResponse({ type: CreatedPortalSessionResponse })
  @ApiErrors(400, 404)
  createPortalSession(
    @Auth() auth: AuthContext,
    @Param('id') storeId: string,
    @Body() dto: CreatePortalSessionDto,
  ): Promise<CreatedPortalSessionResponse> {
    return this.portalSessions.create(auth, storeId, dto);
  }

  @Delete(':id/portal-sessions/:sessionId')
  @HttpCode(204)
  @ApiOperation({ summary: 'End a portal session of any store at once' })
  @ApiNoContentResponse({ description: 'Ended' })
  @ApiErrors(404)
  revokePortalSession(@Param('id') storeId: string, @Param('sessionId') sessionId: string): Promise<void> {
    return this.portalSessions.revoke(storeId, sessionId);
  }
}
