import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiExtraModels, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, type AuthContext, endpointLimit, StoreId } from '../auth/auth-context';
import { RequireScopes } from '../auth/require-scopes.decorator';
import { SessionEndpoints } from '../auth/session-endpoints.decorator';
import { ApiErrors } from '../common/api-errors.decorator';
import { PageOf, type Page } from '../common/pagination';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { ListWebhooksQuery } from './dto/list-webhooks.query';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhookResponse, WebhookWithSecretResponse } from './dto/webhook.response';
import { RotateSecretDto } from './dto/rotate-secret.dto';
import { FilterTestDto } from './dto/filter-test.dto';
import { FilterTestResponse } from './dto/filter-test.response';
import { RECEIVER_AUTH_MODELS } from './dto/receiver-auth.dto';
import { WebhooksService } from './webhooks.service';

const WebhookPage = PageOf(WebhookResponse, 'WebhookPage');

@ApiTags('webhooks')
@ApiExtraModels(...RECEIVER_AUTH_MODELS)
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @RequireScopes('webhooks:read')
  @SessionEndpoints('narrowed')
  @ApiOperation({ summary: "List the store's webhook endpoints, newest first" })
  @ApiOkResponse({ type: WebhookPage })
  @ApiErrors(400)
  list(@Auth() auth: AuthContext, @Query() query: ListWebhooksQuery): Promise<Page<WebhookResponse>> {
    return this.webhooks.list(auth.storeId, query, endpointLimit(auth));
  }

  @Post()
  @RequireScopes('webhooks:write')
  @ApiOperation({ summary: 'Register an endpoint; the response carries its signing secret, once' })
  @ApiCreatedResponse({ type: WebhookWithSecretResponse })
  @ApiErrors(400)
  create(@StoreId() storeId: string, @Body() dto: CreateWebhookDto): Promise<WebhookWithSecretResponse> {
    return this.webhooks.create(storeId, dto);
  }

  @Post('filter-test')
  @HttpCode(200)
  @RequireScopes('webhooks:read')
  @SessionEndpoints('unrelated')
  @ApiOperation({
    summary: 'Try a content filter on an event: would an endpoint with this filter be sent it?',
    description:
      'Evaluates the filter exactly as publishing does, and changes nothing. A filter that does not parse, or an event that is not a ' +
      'JSON object, is refused (400). See docs/api.md#content-filters.',
  })
  @ApiOkResponse({ type: FilterTestResponse })
  @ApiErrors(400)
  testFilter(@Body() dto: FilterTestDto): Promise<FilterTestResponse> {
    return this.webhooks.testFilter(dto.filter, dto.event);
  }

  @Get(':id')
  @SessionEndpoints({ param: 'id' })
  @RequireScopes('webhooks:read')
  @ApiOperation({ summary: 'Get an endpoint (never its secret)' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors(404)
  get(@StoreId() storeId: string, @Param('id') id: string): Promise<WebhookResponse> {
    return this.webhooks.get(storeId, id);
  }

  @Put(':id')
  @SessionEndpoints({ param: 'id' })
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Update an endpoint (partial: fields left out keep their value)',
    description:
      'Setting isActive to false ends its pending deliveries as failed; they can be retried once it is active. ' +
      'On an endpoint already inactive it changes nothing: its disabledReason and disabledAt stay, and no webhook.disabled is sent.',
  })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors(400, 404)
  update(@StoreId() storeId: string, @Param('id') id: string, @Body() dto: UpdateWebhookDto): Promise<WebhookResponse> {
    return this.webhooks.update(storeId, id, dto);
  }

  @Delete(':id')
  @SessionEndpoints({ param: 'id' })
  @HttpCode(204)
  @RequireScopes('webhooks:write')
  @ApiOperation({ summary: 'Delete an endpoint; nothing more is delivered to it, pending retries included' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(404)
  delete(@StoreId() storeId: string, @Param('id') id: string): Promise<void> {
    return this.webhooks.delete(storeId, id);
  }

  @Post(':id/rotate-secret')
  @SessionEndpoints({ param: 'id' })
  @HttpCode(200)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Replace the signing secret, optionally keeping the old one valid for an overlap',
    description:
      'With oldSecretExpiresInSeconds = N > 0 the old secret keeps signing for N seconds: webhook-signature carries both signatures ' +
      '(`v1,<new> v1,<old>`) and X-Webhook-Signature keeps the old secret, so receivers switch without a failed delivery. ' +
      'Then the old secret is erased. Without a body, or with 0, it stops at once. A second rotation ends a running overlap.',
  })
  @ApiOkResponse({ type: WebhookWithSecretResponse })
  @ApiErrors(400, 404)
  rotateSecret(@StoreId() storeId: string, @Param('id') id: string, @Body() dto: RotateSecretDto): Promise<WebhookWithSecretResponse> {
    return this.webhooks.rotateSecret(storeId, id, dto.oldSecretExpiresInSeconds ?? 0);
  }
}
