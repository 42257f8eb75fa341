import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  Length,
  MaxLength,
} from 'class-validator';
import { EVENT_TYPES, type EventType } from '../../events/catalogue/event-catalogue';

export const URL_MAX_LENGTH = 2048;

/** CONTRACT §5 validation; the URL policy (scheme, addresses) is checked by the service. */
export class CreateWebhookDto {
  @ApiProperty({ example: 'ERP order sync', minLength: 1, maxLength: 200 })
  @IsString({ message: 'name must be a string' })
  @Length(1, 200, { message: 'name must be 1 to 200 characters' })
  name: string;

  @ApiProperty({
    example: 'https://erp.example.com/hooks/store',
    maxLength: URL_MAX_LENGTH,
    description: 'Absolute https:// URL (http:// only where ALLOW_HTTP_URLS), no user:password, public address',
  })
  @IsString({ message: 'url must be a string' })
  @MaxLength(URL_MAX_LENGTH, { message: `url must be at most ${URL_MAX_LENGTH} characters` })
  url: string;

  @ApiProperty({ enum: EVENT_TYPES, isArray: true, example: ['order.created', 'payment.received'] })
  @IsArray({ message: 'events must be an array of event types' })
  @ArrayMinSize(1, { message: 'events must contain at least one event type' })
  @ArrayMaxSize(EVENT_TYPES.length, { message: `events must contain at most ${EVENT_TYPES.length} event types` })
  @ArrayUnique({ message: 'events must not contain duplicates' })
  @IsIn(EVENT_TYPES, { each: true, message: 'events contains an unknown event type ($value); see GET /event-types' })
  events: EventType[];

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean({ message: 'isActive must be a boolean' })
  isActive?: boolean;
}
