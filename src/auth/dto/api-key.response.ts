import { ApiProperty, OmitType } from '@nestjs/swagger';
import { SCOPES, type Scope } from '../scopes';
import type { ApiKey } from '../api-key.entity';

export class ApiKeyResponse {
  @ApiProperty({ example: 'key_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({ example: 'ERP integration' })
  name: string;

  @ApiProperty({ enum: SCOPES, isArray: true, example: ['webhooks:read'] })
  scopes: Scope[];

  @ApiProperty({ example: 'st_default' })
  storeId: string;

  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ type: String, nullable: true, example: '2026-11-22T10:05:00.000Z' })
  lastUsedAt: string | null;

  static of(key: ApiKey): ApiKeyResponse {
    return {
      id: key.id,
      name: key.name,
      scopes: key.scopes,
      storeId: key.storeId,
      createdAt: key.createdAt.toISOString(),
      lastUsedAt: key.lastUsedAt ? key.lastUsedAt.toISOString() : null,
    };
  }
}

/** The answer to a create: the only time the key text is shown. */
export class CreatedApiKeyResponse extends OmitType(ApiKeyResponse, ['lastUsedAt'] as const) {
  @ApiProperty({ description: 'The key itself. Shown only in this response; store it now.', example: 'hlk_3q2-…' })
  key: string;
}

export class ApiKeyListResponse {
  @ApiProperty({ type: ApiKeyResponse, isArray: true })
  data: ApiKeyResponse[];
}
