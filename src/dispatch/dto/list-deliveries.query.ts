import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../delivery.entity';

export class ListDeliveriesQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of: ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;

  @ApiPropertyOptional({ example: 'order.created', description: 'An event type of GET /event-types, or webhook.test' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  eventType?: string;
}
