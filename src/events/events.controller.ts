import { BadRequestException, Body, Controller, Get, Headers, Param, Post, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth, type AuthContext, endpointLimit, StoreId } from '../auth/auth-context';
import { RequireScopes } from '../auth/require-scopes.decorator';
import { SessionEndpoints } from '../auth/session-endpoints.decorator';
import { ApiErrors } from '../common/api-errors.decorator';
import { IDEMPOTENCY_KEY } from './batch-events';
import {
  EventResponse,
  EventTypeListResponse,
  EventTypeResponse,
  PublishedBatchResponse,
  PublishedEventResponse,
} from './dto/event.response';
import { PublishBatchDto } from './dto/publish-batch.dto';
import { PublishEventDto } from './dto/publish-event.dto';
import { EventsService } from './events.service';

@ApiTags('events')
@Controller()
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Post('events')
  @RequireScopes('events:write')
  @ApiOperation({
    summary: 'Publish an event to every active endpoint of the store subscribed to its type',
    description:
      'A repeat with the same Idempotency-Key, type and data within 24 hours returns the first event with 200 and ' +
      '`Idempotent-Replayed: true`, and delivers nothing again. The same key with another type or data is refused with 422.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Up to 255 visible ASCII characters, per store' })
  @ApiAcceptedResponse({ type: PublishedEventResponse, description: 'Accepted for delivery' })
  @ApiOkResponse({
    type: PublishedEventResponse,
    description: 'A repeat of an earlier Idempotency-Key: the first event',
    headers: {
      'Idempotent-Replayed': { description: 'Always `true`: this answer is a replay', schema: { type: 'string', enum: ['true'] } },
    },
  })
  @ApiErrors(400, 413, 422, 503)
  async publish(
    @StoreId() storeId: string,
    @Body() dto: PublishEventDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PublishedEventResponse> {
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new BadRequestException(['Idempotency-Key must be 1 to 255 visible ASCII characters']);
    }
    const { duplicate, ...published } = await this.events.publish(storeId, dto.type, dto.data, idempotencyKey);
    res.status(duplicate ? 200 : 202);
    if (duplicate) res.setHeader('Idempotent-Replayed', 'true');
    return published;
  }

  @Post('events/batch')
  @RequireScopes('events:write')
  @ApiOperation({
    summary: 'Publish up to 1,000 events together, in one transaction',
    description:
      'All events or none: if any event is invalid, nothing is published and the 400 names each bad event by its index ' +
      "(`events[3].data.total is required`). An event's `idempotencyKey` works as the `Idempotency-Key` header does for " +
      'POST /events: a repeat answers the first event and delivers nothing again; a key already used for another type or ' +
      'data is refused with 422, and nothing of the batch is published. Two events of one batch may not share a key (400). ' +
      'When every event of the batch is a repeat, the answer is 200 with `Idempotent-Replayed: true`. The body may be up to 10 MiB. ' +
      'An `Idempotency-Key` header is refused with 400: one key cannot stand for many events, so each event carries its own.',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Not accepted on this route (400): give each event its own `idempotencyKey` instead',
  })
  @ApiAcceptedResponse({ type: PublishedBatchResponse, description: 'Accepted for delivery: one entry per event, in the same order' })
  @ApiOkResponse({
    type: PublishedBatchResponse,
    description: 'Every event was a repeat of an earlier idempotencyKey: the first events',
    headers: {
      'Idempotent-Replayed': { description: 'Always `true`: this answer is a replay', schema: { type: 'string', enum: ['true'] } },
    },
  })
  @ApiErrors(400, 413, 422, 503)
  async publishMany(
    @StoreId() storeId: string,
    @Body() dto: PublishBatchDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PublishedBatchResponse> {
    // Ignored, the header would let a client believe its retry of the batch is safe.
    if (idempotencyKey !== undefined) {
      throw new BadRequestException([
        'The Idempotency-Key header is not read by POST /events/batch: give each event its own key in events[].idempotencyKey',
      ]);
    }
    const published = await this.events.publishMany(storeId, dto.events);
    const replayed = published.every((event) => event.duplicate);
    res.status(replayed ? 200 : 202);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    return { data: published.map(({ duplicate: _duplicate, ...event }) => event) };
  }

  @Get('events/:id')
  @RequireScopes('webhooks:read')
  @SessionEndpoints('narrowed')
  @ApiOperation({ summary: 'An event: its envelope and its deliveries' })
  @ApiOkResponse({ type: EventResponse })
  @ApiErrors(404)
  get(@Auth() auth: AuthContext, @Param('id') id: string): Promise<EventResponse> {
    return this.events.get(auth.storeId, id, endpointLimit(auth));
  }

  @Get('event-types')
  @RequireScopes('webhooks:read')
  @SessionEndpoints('unrelated')
  @ApiOperation({
    summary: 'The 20 event types in 7 categories, each with its data shape and an example',
    description:
      'The `Webhooks` category holds Hookline’s own operational events: endpoints subscribe to them, only Hookline publishes them.',
  })
  @ApiOkResponse({ type: EventTypeListResponse })
  eventTypes(): EventTypeListResponse {
    return this.events.eventTypes();
  }

  @Get('event-types/:type')
  @RequireScopes('webhooks:read')
  @SessionEndpoints('unrelated')
  @ApiOperation({
    summary: 'One event type, with the JSON Schema (2020-12) of its data',
    description:
      'The same entry as in GET /event-types. `schema` validates every `data` Hookline delivers for this type: ' +
      'the example, and whatever POST /events accepts. An unknown type answers 404, naming the nearest type when it looks like a typo.',
  })
  @ApiOkResponse({ type: EventTypeResponse })
  @ApiErrors(404)
  eventType(@Param('type') type: string): EventTypeResponse {
    return this.events.eventType(type);
  }
}
