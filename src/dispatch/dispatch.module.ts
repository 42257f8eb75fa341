import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';
import { DeliveryAttempt } from './delivery-attempt.entity';
import { Delivery } from './delivery.entity';
import { DeliveryExpiry } from './delivery-expiry';
import { DeliveryLog } from './delivery-log.repository';
import { DeliveryRepository } from './delivery.repository';
import { dispatchPoolProvider } from './dispatch-pool';
import { DispatchSweeper } from './dispatch-sweeper';
import { Dispatcher } from './dispatcher';
import { EndpointDeactivation } from './endpoint-deactivation';
import { Event } from './event.entity';
import { EventRepository } from './event.repository';
import { IdempotencyKeyExpiry } from './idempotency-key-expiry';
import { PublishBatcher } from './publish-batcher';
import { RetentionScheduler } from './retention-scheduler';
import { WebhookSender } from './webhook-sender';

/**
 * The event log and the delivery queue: writing events with their deliveries, claiming, signing,
 * sending, retrying, recording attempts, and the delivery log API.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Event, Delivery, DeliveryAttempt]), WebhooksModule],
  controllers: [DeliveriesController],
  providers: [
    dispatchPoolProvider,
    DeliveryRepository,
    DeliveryLog,
    DeliveriesService,
    Dispatcher,
    DispatchSweeper,
    WebhookSender,
    EventRepository,
    PublishBatcher,
    IdempotencyKeyExpiry,
    EndpointDeactivation,
    RetentionScheduler,
    DeliveryExpiry,
  ],
  exports: [DeliveryRepository, DeliveryLog, Dispatcher, WebhookSender, EventRepository, PublishBatcher, RetentionScheduler],
})
export class DispatchModule {}
