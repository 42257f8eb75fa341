import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesController } from './api/deliveries.controller';
import { DeliveriesService } from './api/deliveries.service';
import { WebhookTestController } from './api/webhook-test.controller';
import { WebhookTester } from './api/webhook-tester';
import { EndpointDeactivation } from './health/endpoint-deactivation';
import { PublishBatcher } from './publish/publish-batcher';
import { DeliveryExpiry } from './retention/delivery-expiry';
import { IdempotencyKeyExpiry } from './retention/idempotency-key-expiry';
import { RetentionScheduler } from './retention/retention-scheduler';
import { WebhookSender } from './sending/webhook-sender';
import { DeliveryAttempt } from './store/delivery-attempt.entity';
import { DeliveryLog } from './store/delivery-log.repository';
import { Delivery } from './store/delivery.entity';
import { DeliveryRepository } from './store/delivery.repository';
import { dispatchPoolProvider } from './store/dispatch-pool';
import { Event } from './store/event.entity';
import { EventRepository } from './store/event.repository';
import { DispatchSweeper } from './worker/dispatch-sweeper';
import { Dispatcher } from './worker/dispatcher';

/**
 * The event log and the delivery queue: writing events with their deliveries, claiming, signing,
 * sending, retrying, recording attempts, the delivery log API and the endpoint test.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Event, Delivery, DeliveryAttempt]), WebhooksModule],
  controllers: [DeliveriesController, WebhookTestController],
  providers: [
    dispatchPoolProvider,
    DeliveryRepository,
    DeliveryLog,
    DeliveriesService,
    Dispatcher,
    DispatchSweeper,
    WebhookSender,
    WebhookTester,
    EventRepository,
    PublishBatcher,
    IdempotencyKeyExpiry,
    EndpointDeactivation,
    RetentionScheduler,
    DeliveryExpiry,
  ],
  exports: [DeliveryLog, EventRepository, PublishBatcher],
})
export class DispatchModule {}
