import { Module } from '@nestjs/common';
import { DispatchModule } from '../dispatch/dispatch.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { EventPublisher } from './event-publisher';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { WebhookTestController } from './webhook-test.controller';
import { WebhookTester } from './webhook-tester';

/** Publishing (EventPublisher, POST /events) and the endpoint test; dispatch writes what they publish. */
@Module({
  imports: [WebhooksModule, DispatchModule],
  controllers: [EventsController, WebhookTestController],
  providers: [EventPublisher, EventsService, WebhookTester],
  exports: [EventPublisher],
})
export class EventsModule {}
