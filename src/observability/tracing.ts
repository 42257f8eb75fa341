import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { context, ROOT_CONTEXT, type Span, type SpanContext, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import { TRACING_SDK, type TracingSdk } from './tracing-sdk';

/** The attributes Hookline puts on its spans, beside the semantic conventions' HTTP ones. */
export const SPAN_ATTRIBUTES = {
  storeId: 'hookline.store.id',
  eventId: 'hookline.event.id',
  eventType: 'hookline.event.type',
  eventCount: 'hookline.event.count',
  deliveries: 'hookline.event.deliveries',
  duplicate: 'hookline.event.duplicate',
  endpointId: 'hookline.endpoint.id',
  deliveryId: 'hookline.delivery.id',
  attemptNumber: 'hookline.attempt.number',
  attemptDurationMs: 'hookline.attempt.duration_ms',
  outcome: 'hookline.delivery.status',
  retryDelayMs: 'hookline.retry.delay_ms',
} as const;

/** A publish in progress: the context its events carry to their attempts, and its end. */
export interface PublishSpan {
  /** W3C traceparent of the publish span, stored with the events it writes. */
  readonly traceparent: string;
  end(published: { deliveries: number; duplicate?: boolean; eventId?: string }): void;
  fail(error: unknown): void;
}

/** What an attempt span says about its delivery. */
export interface AttemptTarget {
  /** The publish's traceparent stored with the event; null for an event published untraced. */
  parent: string | null;
  storeId: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  deliveryId: string;
  attemptNumber: number;
  url: string;
}

/** How an attempt ended, and what was decided after it. */
export interface AttemptEnd {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  succeeded: boolean;
  /** The delivery's status after the attempt: `pending` when a retry is scheduled. */
  status?: 'pending' | 'succeeded' | 'failed';
  retryDelayMs?: number;
}

/** An attempt in progress: the traceparent its request carries, and its end. */
export interface AttemptSpan {
  readonly traceparent: string;
  end(attempt: AttemptEnd): void;
}

/**
 * The hooks that make a publish and each of its attempts spans of one trace (docs/operations.md#tracing).
 * With tracing off (no OTLP endpoint) no SDK is started and every hook answers undefined at the
 * cost of one test. The publish span's context is stored with its events, so an attempt made
 * later, by another process, is still its child.
 */
@Injectable()
export class Tracing implements OnApplicationShutdown {
  readonly enabled: boolean;
  private readonly tracer?: Tracer;

  constructor(@Inject(TRACING_SDK) private readonly sdk: TracingSdk | null) {
    this.tracer = sdk?.provider.getTracer('hookline');
    this.enabled = this.tracer !== undefined;
  }

  /**
   * Starts the span of a publish of `types` (one event, or a batch) as a child of the caller's
   * active span, if there is one.
   */
  startPublish(storeId: string, types: readonly string[]): PublishSpan | undefined {
    if (!this.tracer) return undefined;
    const distinct = [...new Set(types)];
    const span = this.tracer.startSpan(
      types.length === 1 ? `publish ${types[0]}` : 'publish batch',
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          [SPAN_ATTRIBUTES.storeId]: storeId,
          [SPAN_ATTRIBUTES.eventCount]: types.length,
          ...(distinct.length === 1 ? { [SPAN_ATTRIBUTES.eventType]: distinct[0] } : {}),
        },
      },
      context.active(),
    );
    return {
      traceparent: traceparentOf(span.spanContext()),
      end(published) {
        span.setAttribute(SPAN_ATTRIBUTES.deliveries, published.deliveries);
        if (published.eventId !== undefined) span.setAttribute(SPAN_ATTRIBUTES.eventId, published.eventId);
        if (published.duplicate) span.setAttribute(SPAN_ATTRIBUTES.duplicate, true);
        span.end();
      },
      fail(error) {
        failSpan(span, error);
      },
    };
  }

  /** Starts the span of one attempt, as a child of the span that published its event. */
  startAttempt(target: AttemptTarget): AttemptSpan | undefined {
    if (!this.tracer) return undefined;
    const url = new URL(target.url);
    const span = this.tracer.startSpan(
      `deliver ${target.eventType}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [SPAN_ATTRIBUTES.storeId]: target.storeId,
          [SPAN_ATTRIBUTES.eventId]: target.eventId,
          [SPAN_ATTRIBUTES.eventType]: target.eventType,
          [SPAN_ATTRIBUTES.endpointId]: target.endpointId,
          [SPAN_ATTRIBUTES.deliveryId]: target.deliveryId,
          [SPAN_ATTRIBUTES.attemptNumber]: target.attemptNumber,
          [ATTR_HTTP_REQUEST_METHOD]: 'POST',
          // Host and port only: a webhook URL's path or query often holds a token.
          [ATTR_URL_SCHEME]: url.protocol.slice(0, -1),
          [ATTR_SERVER_ADDRESS]: url.hostname,
          [ATTR_SERVER_PORT]: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        },
      },
      parentContext(target.parent),
    );
    return {
      traceparent: traceparentOf(span.spanContext()),
      end(attempt) {
        span.setAttribute(SPAN_ATTRIBUTES.attemptDurationMs, attempt.durationMs);
        if (attempt.statusCode !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, attempt.statusCode);
        if (attempt.status !== undefined) span.setAttribute(SPAN_ATTRIBUTES.outcome, attempt.status);
        if (attempt.status === 'pending' && attempt.retryDelayMs !== undefined)
          span.setAttribute(SPAN_ATTRIBUTES.retryDelayMs, attempt.retryDelayMs);
        if (!attempt.succeeded) {
          span.setAttribute(ATTR_ERROR_TYPE, attempt.statusCode !== null ? String(attempt.statusCode) : 'attempt_failed');
          span.setStatus({ code: SpanStatusCode.ERROR, message: attempt.error ?? undefined });
        }
        span.end();
      },
    };
  }

  /** Exports the spans still queued; by now the dispatcher has ended its attempts. */
  async onApplicationShutdown(): Promise<void> {
    await this.sdk?.shutdown();
  }
}

/** `00-<trace id>-<span id>-<flags>` (https://www.w3.org/TR/trace-context/#traceparent-header). */
export function traceparentOf(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The context a stored traceparent names as the parent; a new trace without one (or with a bad one). */
function parentContext(traceparent: string | null): typeof ROOT_CONTEXT {
  const parent = traceparent === null ? null : parseTraceParent(traceparent);
  return parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true });
}

function failSpan(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.setAttribute(ATTR_ERROR_TYPE, (error as { code?: unknown } | null)?.code?.toString() ?? (error as Error | null)?.name ?? 'Error');
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.end();
}
