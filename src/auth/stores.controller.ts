import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/api-errors.decorator';
import { PageOf, PageQueryDto, type Page } from '../common/pagination';
import { ApiKeysService } from './api-keys.service';
import { Auth, type AuthContext } from './auth-context';
import { CreatedApiKeyResponse } from './dto/api-key.response';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { CreateStoreDto } from './dto/create-store.dto';
import { StoreResponse } from './dto/store.response';
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
}
