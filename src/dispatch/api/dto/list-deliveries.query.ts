import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination';
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../../../catalogue/event-catalogue';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../store/delivery.entity';

export class ListDeliveriesQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of: ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;

  @ApiPropertyOptional({ example: 'order.created', description: 'An event type of GET /event-types, or webhook.test' })
  @IsOptional()
  @IsIn([...EVENT_TYPES, TEST_EVENT_TYPE], { message: 'eventType must be one of the event types of GET /event-types, or webhook.test' })
  eventType?: string;
}
