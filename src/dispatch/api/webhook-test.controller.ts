import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { StoreId } from '../../auth/auth-context';
import { RequireScopes } from '../../auth/require-scopes.decorator';
import { SessionEndpoints } from '../../auth/session-endpoints.decorator';
import { ApiErrors } from '../../common/api-errors.decorator';
import { TestDeliveryResponse } from './dto/test-delivery.response';
import { WebhookTester } from './webhook-tester';

@ApiTags('webhooks')
@Controller('webhooks')
export class WebhookTestController {
  constructor(private readonly tester: WebhookTester) {}

  @Post(':id/test')
  @SessionEndpoints({ param: 'id' })
  @HttpCode(200)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Send one signed webhook.test delivery now and report the result',
    description: 'Attempted once, synchronously, whether the endpoint is active or not; recorded in the delivery log.',
  })
  @ApiOkResponse({ type: TestDeliveryResponse })
  @ApiErrors(404)
  test(@StoreId() storeId: string, @Param('id') id: string): Promise<TestDeliveryResponse> {
    return this.tester.test(storeId, id);
  }
}
