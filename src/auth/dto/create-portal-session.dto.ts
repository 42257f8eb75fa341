import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { IsSafeName, NAME_RULES } from '../../common/safe-text';
import { PORTAL_CAPABILITIES, type PortalCapability } from '../portal-capabilities';

export const PORTAL_EXPIRY_SECONDS = { min: 60, max: 86_400, default: 3_600 } as const;
/** Endpoints one session may be limited to. */
export const MAX_PORTAL_WEBHOOK_IDS = 100;
const MAX_LOGO_URL_LENGTH = 2_048;

/**
 * Why `text` cannot be a logo's URL, or undefined: the dashboard loads it under a
 * Content-Security-Policy that allows images from https:// only (docs/operations.md#embedding-the-dashboard).
 */
export function logoUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute https:// URL';
  }
  if (url.protocol !== 'https:') return 'must use https:// (the dashboard loads images from https:// only)';
  if (url.username || url.password) return 'must not hold a user name or password';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\s]/.test(text)) return 'must not contain spaces or control characters';
  return undefined;
}

export class PortalBrandingDto {
  @ApiPropertyOptional({
    example: 'Acme Outdoor',
    minLength: 1,
    maxLength: 200,
    description: `The name the dashboard shows in its header and title. ${NAME_RULES}`,
  })
  @IsOptional()
  @IsString({ message: 'name must be text' })
  @Length(1, 200, { message: 'name must be 1 to 200 characters' })
  @IsSafeName()
  name?: string;

  @ApiPropertyOptional({ example: '#0a7d5a', pattern: '^#[0-9a-fA-F]{6}$', description: 'The colour of buttons, links and focus rings' })
  @IsOptional()
  @Matches(/^#[0-9a-fA-F]{6}$/, { message: 'accentColor must be a colour written #rrggbb, e.g. #0a7d5a' })
  accentColor?: string;

  @ApiPropertyOptional({
    example: 'https://platform.example/logo.svg',
    format: 'uri',
    maxLength: MAX_LOGO_URL_LENGTH,
    description: 'An image shown in place of the service’s icon (https:// only; shown at most 28 px high)',
  })
  @IsOptional()
  @IsString({ message: 'logoUrl must be text' })
  @MaxLength(MAX_LOGO_URL_LENGTH, { message: `logoUrl must be at most ${MAX_LOGO_URL_LENGTH} characters` })
  @ValidateBy({
    name: 'isLogoUrl',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || logoUrlProblem(value) === undefined,
      defaultMessage: (args) => `logoUrl ${logoUrlProblem(String(args?.value)) ?? 'is not valid'}`,
    },
  })
  logoUrl?: string;
}

export class CreatePortalSessionDto {
  @ApiProperty({
    enum: PORTAL_CAPABILITIES,
    isArray: true,
    example: ['read', 'manage'],
    description:
      '`["read"]`: see endpoints, deliveries and the catalogue; `["read", "manage"]`: also edit, test, rotate the secret of, ' +
      'retry and replay (and, without `webhookIds`, create and delete) endpoints',
  })
  @IsArray({ message: 'capabilities must be an array: ["read"] or ["read", "manage"]' })
  @ArrayMinSize(1, { message: 'capabilities must be ["read"] or ["read", "manage"]' })
  @ArrayUnique({ message: 'capabilities must not repeat a capability' })
  @IsIn(PORTAL_CAPABILITIES, { each: true, message: `each capability must be one of: ${PORTAL_CAPABILITIES.join(', ')}` })
  @ValidateBy({
    name: 'includesRead',
    validator: {
      validate: (value: unknown) => !Array.isArray(value) || value.length === 0 || value.includes('read'),
      defaultMessage: () => 'capabilities must include read: ["read"] or ["read", "manage"]',
    },
  })
  capabilities: PortalCapability[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_PORTAL_WEBHOOK_IDS,
    example: ['wh_01jd5v1xkq8w3r0m6m2n4p7s9t'],
    description: 'Limits the session to these endpoints of the store (left out: all of them, and it may create endpoints)',
  })
  @IsOptional()
  @IsArray({ message: 'webhookIds must be an array of endpoint ids' })
  @ArrayMinSize(1, { message: 'webhookIds must name at least one endpoint (leave it out for all of them)' })
  @ArrayMaxSize(MAX_PORTAL_WEBHOOK_IDS, { message: `webhookIds must name at most ${MAX_PORTAL_WEBHOOK_IDS} endpoints` })
  @ArrayUnique({ message: 'webhookIds must not repeat an id' })
  @IsString({ each: true, message: 'each of webhookIds must be an endpoint id' })
  @MaxLength(100, { each: true, message: 'each of webhookIds must be an endpoint id' })
  webhookIds?: string[];

  @ApiPropertyOptional({
    minimum: PORTAL_EXPIRY_SECONDS.min,
    maximum: PORTAL_EXPIRY_SECONDS.max,
    default: PORTAL_EXPIRY_SECONDS.default,
    description: 'How long the session lasts, from now; its link must be opened within that time too',
  })
  @IsOptional()
  @IsInt({ message: 'expiresInSeconds must be an integer from 60 to 86400' })
  @Min(PORTAL_EXPIRY_SECONDS.min, { message: 'expiresInSeconds must be an integer from 60 to 86400' })
  @Max(PORTAL_EXPIRY_SECONDS.max, { message: 'expiresInSeconds must be an integer from 60 to 86400' })
  expiresInSeconds?: number;

  @ApiPropertyOptional({ type: PortalBrandingDto, description: 'How the dashboard presents itself to this session' })
  @IsOptional()
  @IsObject({ message: 'branding must be an object: {name?, accentColor?, logoUrl?}' })
  @ValidateNested()
  @Type(() => PortalBrandingDto)
  branding?: PortalBrandingDto;
}

export class ExchangePortalCodeDto {
  @ApiProperty({ description: 'The code after `#portal=` in the session’s `url`', example: 'q3Jf…' })
  @IsString({ message: 'code must be text' })
  @Length(1, 512, { message: 'code must be 1 to 512 characters' })
  code: string;
}
