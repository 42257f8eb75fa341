import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, type AuthContext, endpointLimit, StoreId } from '../../auth/auth-context';
import { RequireScopes } from '../../auth/require-scopes.decorator';
import { SessionEndpoints } from '../../auth/session-endpoints.decorator';
import { ApiErrors } from '../../common/api-errors.decorator';
import { PageOf, type Page } from '../../common/pagination';
import { DeliveriesService } from './deliveries.service';
import { DeliveryDetailResponse, DeliveryResponse, ReplayResponse, RetryFailedResponse } from './dto/delivery.response';
import { ListDeliveriesQuery } from './dto/list-deliveries.query';
import { ReplayDto } from './dto/replay.dto';
import { RetryFailedDto } from './dto/retry-failed.dto';

const DeliveryPage = PageOf(DeliveryResponse, 'DeliveryPage');

@ApiTags('deliveries')
@Controller()
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get('webhooks/:id/deliveries')
  @SessionEndpoints({ param: 'id' })
  @RequireScopes('webhooks:read')
  @ApiOperation({ summary: "An endpoint's deliveries, newest first" })
  @ApiOkResponse({ type: DeliveryPage })
  @ApiErrors(400, 404)
  list(@StoreId() storeId: string, @Param('id') webhookId: string, @Query() query: ListDeliveriesQuery): Promise<Page<DeliveryResponse>> {
    return this.deliveries.listForWebhook(storeId, webhookId, query);
  }

  @Post('webhooks/:id/deliveries/retry-failed')
  @SessionEndpoints({ param: 'id' })
  @HttpCode(202)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: "Start a new cycle of attempts for an endpoint's failed deliveries",
    description:
      'Restarts the failed deliveries of events published at or after `since` (all when left out), oldest event first, at most ' +
      '`MAX_REPLAY_DELIVERIES` per request; when more are left the answer holds `next`, the `since` of the request that continues. ' +
      'A delivery that has had `MAX_ATTEMPTS_PER_DELIVERY` attempts stays failed. ' +
      '409 while the endpoint is inactive, or while another replay or retry-failed of it runs; 503 when the request runs past ' +
      '`REPLAY_TIMEOUT_MS` (nothing is restarted).',
  })
  @ApiAcceptedResponse({ type: RetryFailedResponse })
  @ApiErrors(400, 404, 409, 503)
  retryFailed(@StoreId() storeId: string, @Param('id') webhookId: string, @Body() dto: RetryFailedDto): Promise<RetryFailedResponse> {
    return this.deliveries.retryFailed(storeId, webhookId, dto.since);
  }

  @Post('webhooks/:id/replay')
  @SessionEndpoints({ param: 'id' })
  @HttpCode(202)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Send an endpoint the events it missed, such as those published while it was disabled',
    description:
      'Queues one delivery for every event of the store published in [since, until) of a type the endpoint subscribes to now, ' +
      'that has no delivery to this endpoint yet; a second identical call queues 0. Reaches back no further than retention ' +
      '(`RETENTION_DAYS`). Queues at most `MAX_REPLAY_DELIVERIES`, oldest event first; when the window holds more the answer ' +
      'holds `next`, the `since` of the request that continues. 400 for a window that starts in the future or is reversed; 409 ' +
      'while the endpoint is inactive (re-enable it first) or while another replay or retry-failed of it runs; 503 when the ' +
      'request runs past `REPLAY_TIMEOUT_MS` (nothing is queued).',
  })
  @ApiAcceptedResponse({ type: ReplayResponse })
  @ApiErrors(400, 404, 409, 503)
  replay(@StoreId() storeId: string, @Param('id') webhookId: string, @Body() dto: ReplayDto): Promise<ReplayResponse> {
    return this.deliveries.replay(storeId, webhookId, dto);
  }

  @Get('deliveries/:id')
  @SessionEndpoints('narrowed')
  @RequireScopes('webhooks:read')
  @ApiOperation({ summary: 'A delivery with its envelope and every attempt' })
  @ApiOkResponse({ type: DeliveryDetailResponse })
  @ApiErrors(404)
  get(@Auth() auth: AuthContext, @Param('id') id: string): Promise<DeliveryDetailResponse> {
    return this.deliveries.get(auth.storeId, id, endpointLimit(auth));
  }

  @Post('deliveries/:id/retry')
  @SessionEndpoints('narrowed')
  @HttpCode(202)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Retry a failed or succeeded delivery (same event id and body); 409 while pending',
    description:
      'Starts a new cycle of attempts. A delivery is attempted at most `MAX_ATTEMPTS_PER_DELIVERY` times over its whole life, ' +
      'retries included: a cycle ends early at that attempt, and a retry of a delivery that has had them all answers 409.',
  })
  @ApiAcceptedResponse({ type: DeliveryResponse })
  @ApiErrors(404, 409)
  retry(@Auth() auth: AuthContext, @Param('id') id: string): Promise<DeliveryResponse> {
    return this.deliveries.retry(auth.storeId, id, endpointLimit(auth));
  }
}
