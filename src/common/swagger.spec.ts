import { Body, Controller, Get, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ApiOperation, ApiProperty, ApiTags, type OpenAPIObject } from '@nestjs/swagger';
import { RequireScopes } from '../auth/require-scopes.decorator';
import { loadConfig } from '../config/app-config';
import { ApiErrors } from './api-errors.decorator';
import { API_PREFIX, PREFIX_OPTIONS } from './api-prefix';
import { Public } from './public.decorator';
import { buildOpenApiDocument } from './swagger';

class NoteDto {
  @ApiProperty()
  text: string;
}

@ApiTags('webhooks')
@Controller('notes')
class NotesController {
  @Post()
  @RequireScopes('webhooks:write')
  @ApiOperation({ summary: 'Create a note', description: 'Kept for a day.' })
  create(@Body() _dto: NoteDto): void {}

  @Post(':id/copy')
  @RequireScopes('webhooks:read', 'webhooks:write')
  @ApiOperation({ summary: 'Copy a note' })
  @ApiErrors(404)
  copy(@Param('id') _id: string): void {}

  @Get('count')
  @RequireScopes()
  @ApiOperation({ summary: 'Count the notes' })
  count(): void {}

  @Post('share')
  @RequireScopes('portal:write')
  @ApiOperation({ summary: 'Share the notes' })
  share(): void {}
}

@ApiTags('health')
@Public()
@Controller()
class PingController {
  @Get(['health', `${API_PREFIX}/health`])
  @ApiOperation({ summary: 'Ping' })
  ping(): void {}
}

@Module({ controllers: [NotesController, PingController] })
class NotesModule {}

describe('buildOpenApiDocument', () => {
  let document: OpenAPIObject;

  beforeAll(async () => {
    const app = await NestFactory.create<NestExpressApplication>(NotesModule, { preview: true, logger: false });
    app.setGlobalPrefix(API_PREFIX, PREFIX_OPTIONS);
    document = buildOpenApiDocument(app, loadConfig({ NODE_ENV: 'test' }));
  });

  it('puts the API prefix in the server URL, and lists a route also declared under it once', () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: `/${API_PREFIX}` })]);
    expect(Object.keys(document.paths).sort()).toEqual(['/health', '/notes', '/notes/count', '/notes/share', '/notes/{id}/copy']);
  });

  it('declares the tags in the order integrators need them', () => {
    expect(document.tags?.map((tag) => tag.name)).toEqual([
      'webhooks',
      'events',
      'deliveries',
      'api-keys',
      'stores',
      'portal-sessions',
      'health',
    ]);
    expect(document.tags?.every((tag) => tag.description)).toBe(true);
  });

  it('requires the API key without scopes in the requirement, and names the scopes in an extension and the description', () => {
    const create = document.paths['/notes'].post!;
    expect(create.security).toEqual([{ 'api-key': [] }, { 'portal-session': [] }]);
    expect(create).toMatchObject({ 'x-required-scopes': ['webhooks:write'] });
    expect(create.description).toBe(
      'Kept for a day.\n\nRequires an API key with the scope `webhooks:write` (or a portal session’s token holding it).',
    );
    const copy = document.paths['/notes/{id}/copy'].post!;
    expect(copy).toMatchObject({ 'x-required-scopes': ['webhooks:read', 'webhooks:write'] });
    expect(copy.description).toBe(
      'Requires an API key with the scopes `webhooks:read`, `webhooks:write` (or a portal session’s token holding them).',
    );
    expect(document.paths['/notes/count'].get!.description).toBe('Requires an API key, of any scope (or a portal session’s token).');
  });

  it('offers the portal session token only where a session could hold every scope required', () => {
    expect(document.paths['/notes/count'].get!.security).toEqual([{ 'api-key': [] }, { 'portal-session': [] }]);
    expect(document.paths['/notes/share'].post!.security).toEqual([{ 'api-key': [] }]);
    expect(document.paths['/notes/share'].post!.description).toBe('Requires an API key with the scope `portal:write`.');
    expect(document.components?.securitySchemes?.['portal-session']).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('marks a public route as needing no security', () => {
    expect(document.paths['/health'].get!.security).toEqual([]);
  });

  it('documents 413 on a route that takes a body, and only there', () => {
    expect(document.paths['/notes'].post!.responses['413']).toEqual({
      description: 'Body over 1 MiB',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
    });
    expect(Object.keys(document.paths['/notes/{id}/copy'].post!.responses)).not.toContain('413');
  });

  it('documents Retry-After on the 429 answer', () => {
    expect(document.paths['/notes'].post!.responses['429']).toMatchObject({
      headers: { 'Retry-After': { schema: { type: 'integer' } } },
    });
  });
});
