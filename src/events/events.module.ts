import { Module } from '@nestjs/common';
import { DispatchModule } from '../dispatch/dispatch.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { EventPublisher } from './event-publisher';
import { EventRepository } from './event.repository';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { IdempotencyKeyExpiry } from './idempotency-key-expiry';
import { PublishBatcher } from './publish-batcher';
import { WebhookTestController } from './webhook-test.controller';
import { WebhookTester } from './webhook-tester';

/** The event catalogue, publishing (EventPublisher, POST /events) and the endpoint test. */
@Module({
  imports: [WebhooksModule, DispatchModule],
  controllers: [EventsController, WebhookTestController],
  providers: [EventPublisher, EventRepository, PublishBatcher, EventsService, WebhookTester, IdempotencyKeyExpiry],
  exports: [EventPublisher],
})
export class EventsModule {}
