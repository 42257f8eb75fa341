import { Module } from '@nestjs/common';
import { EventsModule } from '../../../src/events/events.module';
import { StoreOrdersService } from './store-orders.service';

/** Example consumer of EventPublisher (see StoreOrdersService). No routes. */
@Module({
  imports: [EventsModule],
  providers: [StoreOrdersService],
  exports: [StoreOrdersService],
})
export class StoreOrdersModule {}
