import { ApiProperty } from '@nestjs/swagger';
import { ATTEMPT_TRIGGERS, type AttemptTrigger } from '../../store/delivery-attempt.entity';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../store/delivery.entity';
import type { DeliveryRow } from '../../store/delivery-log.repository';
import type { AttemptRow } from '../../store/delivery.repository';

export class DeliveryResponse {
  @ApiProperty({ example: 'del_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({ example: 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  eventId: string;

  @ApiProperty({ example: 'wh_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  webhookId: string;

  @ApiProperty({ example: 'order.created' })
  eventType: string;

  @ApiProperty({ enum: DELIVERY_STATUSES, example: 'pending' })
  status: DeliveryStatus;

  @ApiProperty({ example: 1, description: 'Attempts made so far, every cycle counted' })
  attemptCount: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '2026-11-22T10:00:01.000Z',
    description: 'When the next attempt is due; null once final, and while an attempt is in flight',
  })
  nextAttemptAt: string | null;

  @ApiProperty({ type: Number, nullable: true, example: 500 })
  lastStatusCode: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'HTTP 500',
    description:
      'Why the last attempt failed, or why the delivery ended without one (the endpoint was made inactive; `expired: …` when it was still pending MAX_DELIVERY_AGE after its event)',
  })
  lastError: string | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 212,
    description:
      'How long the last attempt took, in milliseconds: from sending the request to the end of the answer, or to the error that ended it. Null before the first attempt',
  })
  lastDurationMs: number | null;

  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ example: '2026-11-22T10:00:00.120Z' })
  updatedAt: string;

  static of(row: DeliveryRow): DeliveryResponse {
    return {
      id: row.id,
      eventId: row.eventId,
      webhookId: row.webhookId,
      eventType: row.eventType,
      status: row.status,
      attemptCount: row.attemptCount,
      nextAttemptAt: row.status === 'pending' && !row.leased && row.nextAttemptAt ? row.nextAttemptAt.toISOString() : null,
      lastStatusCode: row.lastStatusCode,
      lastError: row.lastError,
      lastDurationMs: row.lastDurationMs,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class AttemptResponse {
  @ApiProperty({ example: 1, description: "The attempt's number over the delivery's life, every cycle counted" })
  number: number;

  @ApiProperty({
    enum: ATTEMPT_TRIGGERS,
    example: 'scheduled',
    description:
      '`manual`: the first attempt of a cycle started by a retry (POST /deliveries/:id/retry or /webhooks/:id/deliveries/retry-failed); `scheduled`: the first attempt of the delivery and every retry of the schedule',
  })
  trigger: AttemptTrigger;

  @ApiProperty({ example: '2026-11-22T10:00:00.010Z' })
  startedAt: string;

  @ApiProperty({ example: 42 })
  durationMs: number;

  @ApiProperty({ type: Number, nullable: true, example: 500 })
  statusCode: number | null;

  @ApiProperty({ type: String, nullable: true, example: 'HTTP 500' })
  error: string | null;

  @ApiProperty({ type: String, nullable: true, example: '{"error":"database down"}', description: 'At most 4 KiB' })
  responseBody: string | null;

  static of(row: AttemptRow): AttemptResponse {
    return {
      number: row.number,
      trigger: row.trigger,
      startedAt: row.startedAt.toISOString(),
      durationMs: row.durationMs,
      statusCode: row.statusCode,
      error: row.error,
      responseBody: row.responseBody,
    };
  }
}

export class EnvelopeResponse {
  @ApiProperty({ example: 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({ example: 'order.created' })
  type: string;

  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' })
  timestamp: string;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { id: 'ord_1001', orderNumber: '1001' } })
  data: Record<string, unknown>;
}

export class DeliveryDetailResponse extends DeliveryResponse {
  @ApiProperty({ type: EnvelopeResponse, description: 'The envelope, exactly as sent' })
  event: EnvelopeResponse;

  @ApiProperty({ type: AttemptResponse, isArray: true })
  attempts: AttemptResponse[];
}

/** The `next` of a replay or retry-failed answer: present only when the request stopped at its cap. */
const NEXT_PROPERTY = {
  type: String,
  required: false,
  example: '2026-11-22T10:15:00.000Z',
  description:
    'Present when the request stopped at MAX_REPLAY_DELIVERIES with more left: send the same request again with this as `since` ' +
    '(and the same `until`) to continue. Continuing neither skips nor repeats one; absent when this request took all of it',
};

export class RetryFailedResponse {
  @ApiProperty({ example: 12, description: 'Failed deliveries that started a new cycle (at most MAX_REPLAY_DELIVERIES)' })
  queued: number;

  @ApiProperty(NEXT_PROPERTY)
  next?: string;

  static of(batch: { queued: number; next: Date | null }): RetryFailedResponse {
    return batch.next ? { queued: batch.queued, next: batch.next.toISOString() } : { queued: batch.queued };
  }
}

export class ReplayResponse {
  @ApiProperty({
    example: 3,
    description:
      'New deliveries, one per event of the window the endpoint had none of (at most MAX_REPLAY_DELIVERIES); 0 when it missed nothing',
  })
  queued: number;

  @ApiProperty(NEXT_PROPERTY)
  next?: string;

  static of(batch: { queued: number; next: Date | null }): ReplayResponse {
    return batch.next ? { queued: batch.queued, next: batch.next.toISOString() } : { queued: batch.queued };
  }
}
