import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { EVENT_TYPES, type EventType } from '../../catalogue/event-catalogue';

export class ListWebhooksQuery extends PageQueryDto {
  @ApiPropertyOptional({ type: Boolean, description: 'Only active (true) or inactive (false) endpoints' })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'isActive must be true or false' })
  isActive?: boolean;

  @ApiPropertyOptional({ enum: EVENT_TYPES, description: 'Only endpoints subscribed to this event type' })
  @IsOptional()
  @IsIn(EVENT_TYPES, { message: 'event must be one of the event types of GET /event-types' })
  event?: EventType;
}
