import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DispatchModule } from '../dispatch/dispatch.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { Event } from './event.entity';
import { EventPublisher } from './event-publisher';
import { EventRepository } from './event.repository';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { IdempotencyKeyExpiry } from './idempotency-key-expiry';
import { PublishBatcher } from './publish-batcher';
import { WebhookTestController } from './webhook-test.controller';
import { WebhookTester } from './webhook-tester';

/** Publishing (EventPublisher, POST /events) and the endpoint test. */
@Module({
  imports: [TypeOrmModule.forFeature([Event]), WebhooksModule, DispatchModule],
  controllers: [EventsController, WebhookTestController],
  providers: [EventPublisher, EventRepository, PublishBatcher, EventsService, WebhookTester, IdempotencyKeyExpiry],
  exports: [EventPublisher],
})
export class EventsModule {}
