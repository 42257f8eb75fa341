import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsString,
  Length,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { EVENT_TYPES, type EventType } from '../../catalogue/event-catalogue';
import { unknownEventTypeMessage } from '../../catalogue/unknown-event-type';
import { MAX_URL_LENGTH } from '../url-policy';
import { IsSafeName, NAME_RULES } from '../../common/safe-text';
import { EndpointSettingsDto } from './endpoint-settings';
import { ContentFilterDto } from './content-filter.dto';

const EVENTS_NOT_AN_ARRAY = 'events must be an array of event types';

/** The URL policy (scheme, addresses) is checked by the service; the rest here (docs/input-rules.md). */
class EndpointDto {
  @ApiProperty({ example: 'ERP order sync', minLength: 1, maxLength: 200, description: NAME_RULES })
  @IsString({ message: 'name must be a string' })
  @Length(1, 200, { message: 'name must be 1 to 200 characters' })
  @IsSafeName()
  name: string;

  @ApiProperty({
    example: 'https://erp.example.com/hooks/store',
    maxLength: MAX_URL_LENGTH,
    description: 'Absolute https:// URL (http:// only where ALLOW_HTTP_URLS), no user:password, public address',
  })
  @IsString({ message: 'url must be a string' })
  @MaxLength(MAX_URL_LENGTH, { message: `url must be at most ${MAX_URL_LENGTH} characters` })
  url: string;

  @ApiProperty({ enum: EVENT_TYPES, isArray: true, example: ['order.created', 'payment.received'] })
  @IsArray({ message: EVENTS_NOT_AN_ARRAY })
  @ArrayMinSize(1, { message: 'events must contain at least one event type' })
  @ArrayMaxSize(EVENT_TYPES.length, { message: `events must contain at most ${EVENT_TYPES.length} event types` })
  @ArrayUnique({ message: 'events must not contain duplicates' })
  @IsIn(EVENT_TYPES, {
    each: true,
    message: ({ value }) => (Array.isArray(value) ? unknownEventTypeMessage('events', value) : EVENTS_NOT_AN_ARRAY),
  })
  events: EventType[];

  @ApiPropertyOptional({ default: true })
  // Not @IsOptional(), which lets null through: `"isActive": null` is a wrong type, not an omission.
  @ValidateIf((_dto: object, value: unknown) => value !== undefined)
  @IsBoolean({ message: 'isActive must be a boolean' })
  isActive?: boolean;
}

/** POST /webhooks: the endpoint and, optionally, its delivery settings and content filter. */
export class CreateWebhookDto extends IntersectionType(EndpointDto, EndpointSettingsDto, ContentFilterDto) {}
