import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';
import { DeliveryAttempt } from './delivery-attempt.entity';
import { Delivery } from './delivery.entity';
import { DeliveryRepository } from './delivery.repository';
import { dispatchPoolProvider } from './dispatch-pool';
import { DispatchSweeper } from './dispatch-sweeper';
import { Dispatcher } from './dispatcher';
import { WebhookSender } from './webhook-sender';

/** Deliveries and attempts: claiming, signing, sending, retrying, and the delivery log API. */
@Module({
  imports: [TypeOrmModule.forFeature([Delivery, DeliveryAttempt]), WebhooksModule],
  controllers: [DeliveriesController],
  providers: [dispatchPoolProvider, DeliveryRepository, DeliveriesService, Dispatcher, DispatchSweeper, WebhookSender],
  exports: [DeliveryRepository, Dispatcher, WebhookSender],
})
export class DispatchModule {}
