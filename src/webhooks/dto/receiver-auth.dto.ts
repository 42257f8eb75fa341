import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import type { CertificateSummary, ShownTls } from '../receiver-credentials';

/*
 * The shapes of `auth` and `tls` for the OpenAPI document. Input is checked by
 * receiverAuthProblems and clientTlsProblems (one message per field), not by decorators here.
 */

export class BasicAuthDto {
  @ApiProperty({ enum: ['basic'] })
  type: 'basic';

  @ApiProperty({ example: 'hookline', maxLength: 256, description: 'No ":" (RFC 7617)' })
  username: string;

  @ApiProperty({
    example: 'correct horse battery staple',
    maxLength: 4096,
    writeOnly: true,
    description: 'Stored encrypted, never returned',
  })
  password: string;
}

export class BearerAuthDto {
  @ApiProperty({ enum: ['bearer'] })
  type: 'bearer';

  @ApiProperty({
    example: 'sk_live_4f9a1c7e2b',
    maxLength: 4096,
    writeOnly: true,
    description: 'Visible ASCII; stored encrypted, never returned',
  })
  token: string;
}

export class OAuth2AuthDto {
  @ApiProperty({ enum: ['oauth2'] })
  type: 'oauth2';

  @ApiProperty({
    example: 'https://auth.erp.example.com/oauth/token',
    description: 'Token endpoint of the client-credentials grant; the same rules as the endpoint url (https://, public address)',
  })
  tokenUrl: string;

  @ApiProperty({ example: 'hookline-berlin', maxLength: 256 })
  clientId: string;

  @ApiProperty({ example: 'cs_9b1f7a', maxLength: 4096, writeOnly: true, description: 'Stored encrypted, never returned' })
  clientSecret: string;

  @ApiPropertyOptional({ example: 'webhooks:write', maxLength: 1024, description: 'Sent as the scope parameter of the token request' })
  scope?: string;

  @ApiPropertyOptional({ example: 'https://erp.example.com', description: 'Sent as the audience parameter (Auth0 and others ask for one)' })
  audience?: string;
}

// With the mapping, generated clients type `type` as "basic", not as the class's name.
export const AUTH_INPUT_SCHEMA = {
  oneOf: [{ $ref: getSchemaPath(BasicAuthDto) }, { $ref: getSchemaPath(BearerAuthDto) }, { $ref: getSchemaPath(OAuth2AuthDto) }],
  discriminator: {
    propertyName: 'type',
    mapping: { basic: getSchemaPath(BasicAuthDto), bearer: getSchemaPath(BearerAuthDto), oauth2: getSchemaPath(OAuth2AuthDto) },
  },
};

export class ClientTlsDto {
  @ApiProperty({
    example: '-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----\n',
    description: 'PEM client certificate, optionally followed by its intermediates; must be in force and match clientKey',
  })
  clientCertificate: string;

  @ApiProperty({
    example: '-----BEGIN PRIVATE KEY-----\n…\n-----END PRIVATE KEY-----\n',
    writeOnly: true,
    description: 'Unencrypted PEM private key of the certificate; stored encrypted, never returned',
  })
  clientKey: string;

  @ApiPropertyOptional({
    example: '-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----\n',
    description: "PEM authorities the receiver's certificate must chain to, instead of the public ones (a private authority)",
  })
  ca?: string;
}

export class BasicAuthResponse {
  @ApiProperty({ enum: ['basic'] })
  type: 'basic';

  @ApiProperty({ example: 'hookline' })
  username: string;
}

export class BearerAuthResponse {
  @ApiProperty({ enum: ['bearer'] })
  type: 'bearer';
}

export class OAuth2AuthResponse {
  @ApiProperty({ enum: ['oauth2'] })
  type: 'oauth2';

  @ApiProperty({ example: 'https://auth.erp.example.com/oauth/token' })
  tokenUrl: string;

  @ApiProperty({ example: 'hookline-berlin' })
  clientId: string;

  @ApiProperty({ type: String, nullable: true, example: 'webhooks:write' })
  scope: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  audience: string | null;
}

export const AUTH_RESPONSE_SCHEMA = {
  oneOf: [
    { $ref: getSchemaPath(BasicAuthResponse) },
    { $ref: getSchemaPath(BearerAuthResponse) },
    { $ref: getSchemaPath(OAuth2AuthResponse) },
  ],
  discriminator: {
    propertyName: 'type',
    mapping: {
      basic: getSchemaPath(BasicAuthResponse),
      bearer: getSchemaPath(BearerAuthResponse),
      oauth2: getSchemaPath(OAuth2AuthResponse),
    },
  },
};

export class CertificateSummaryResponse implements CertificateSummary {
  @ApiProperty({ example: 'CN=hookline-berlin, O=Example GmbH' })
  subject: string;

  @ApiProperty({ example: 'CN=Example Private CA' })
  issuer: string;

  @ApiProperty({ example: '5E:0A:…:C4', description: 'SHA-256 of the certificate, colon-separated hex' })
  fingerprint: string;

  @ApiProperty({ type: String, format: 'date-time', example: '2026-11-01T00:00:00.000Z' })
  validFrom: string;

  @ApiProperty({ type: String, format: 'date-time', example: '2027-11-01T00:00:00.000Z' })
  validTo: string;
}

export class ClientTlsResponse implements ShownTls {
  @ApiProperty({ type: CertificateSummaryResponse, description: 'The client certificate sent for mutual TLS (its key is never returned)' })
  clientCertificate: CertificateSummaryResponse;

  @ApiProperty({
    type: [CertificateSummaryResponse],
    nullable: true,
    description: "The authorities the receiver's certificate must chain to; null: the public ones",
  })
  ca: CertificateSummaryResponse[] | null;
}

/**
 * `tls`, or null, written as such: `type: Class` with `nullable` comes out as an allOf that forbids
 * null, and a bare reference gets `type: object` beside it.
 */
export const TLS_INPUT_SCHEMA = { oneOf: [{ $ref: getSchemaPath(ClientTlsDto) }, { type: 'null' }] };
export const TLS_RESPONSE_SCHEMA = { oneOf: [{ $ref: getSchemaPath(ClientTlsResponse) }, { type: 'null' }] };

export const RECEIVER_AUTH_MODELS = [
  BasicAuthDto,
  BearerAuthDto,
  OAuth2AuthDto,
  ClientTlsDto,
  BasicAuthResponse,
  BearerAuthResponse,
  OAuth2AuthResponse,
  ClientTlsResponse,
];
