import { Module } from '@nestjs/common';
import { DispatchModule } from '../dispatch/dispatch.module';
import { EventPublisher } from './event-publisher';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** Publishing (EventPublisher, POST /events) and reading events back; dispatch writes what they publish. */
@Module({
  imports: [DispatchModule],
  controllers: [EventsController],
  providers: [EventPublisher, EventsService],
  exports: [EventPublisher],
})
export class EventsModule {}
