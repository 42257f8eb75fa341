import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PORTAL_CAPABILITIES, type PortalCapability } from '../portal-capabilities';

/** The answer to a create: the only time the token and the link are shown. */
export class CreatedPortalSessionResponse {
  @ApiProperty({ example: 'ps_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({
    example: 'https://hooks.example.com/dashboard#portal=q3Jf…',
    description: 'The dashboard, signed in to the session by the one-time code after `#portal=`: open it once. Shown only here.',
  })
  url: string;

  @ApiProperty({
    example: 'hlp_3q2-…',
    description:
      'Authenticates API requests as `Authorization: Bearer <token>`, with the session’s store and capabilities. Shown only here.',
  })
  token: string;

  @ApiProperty({ example: '2026-11-22T11:00:00.000Z' })
  expiresAt: string;
}

export class PortalBrandingResponse {
  @ApiPropertyOptional({ example: 'Acme Outdoor' })
  name?: string;

  @ApiPropertyOptional({ example: '#0a7d5a' })
  accentColor?: string;

  @ApiPropertyOptional({ example: 'https://platform.example/logo.svg' })
  logoUrl?: string;
}

/** A signed-in portal session, as the dashboard needs it. */
export class PortalSessionResponse {
  @ApiProperty({ example: 'ps_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({ example: 'st_default' })
  storeId: string;

  @ApiProperty({ enum: PORTAL_CAPABILITIES, isArray: true, example: ['read'] })
  capabilities: PortalCapability[];

  @ApiProperty({
    type: [String],
    nullable: true,
    example: null,
    description: 'The only endpoints the session sees and acts on; null: every endpoint of the store',
  })
  webhookIds: string[] | null;

  @ApiProperty({ type: PortalBrandingResponse })
  branding: PortalBrandingResponse;

  @ApiProperty({ example: '2026-11-22T11:00:00.000Z' })
  expiresAt: string;

  @ApiPropertyOptional({
    example: 'Zk3…',
    description: 'For a browser signed in by its cookie: every request of it that changes something must carry this in `X-CSRF-Token`',
  })
  csrfToken?: string;
}
