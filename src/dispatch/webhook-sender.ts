import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Agent, request } from 'undici';
import { AppConfig } from '../config/app-config';
import { UrlPolicy } from '../webhooks/url-policy';
import { AttemptDeadlines, type DeadlineSignal } from './attempt-deadlines';
import { signPayload } from './signature';

/** At most this much of a response body is read and kept (CONTRACT §7). */
export const RESPONSE_EXCERPT_BYTES = 4096;

export interface SendRequest {
  url: string;
  eventId: string;
  body: string;
  secret: string;
}

export interface SendResult {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  /** null on a 2xx answer; otherwise what went wrong, for the attempt log. */
  error: string | null;
  responseBody: string | null;
  succeeded: boolean;
}

/**
 * One signed POST of an envelope (CONTRACT §7). undici, not axios: see bench/README.md for the
 * measurement. One keep-alive pool per origin, a connect-time `lookup` that only hands out
 * addresses the URL policy accepts (so the socket goes to the address that was checked), no
 * redirects followed, one time limit on the whole attempt, at most 4 KiB of the answer read.
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly userAgent: string;
  private readonly deadlines = new AttemptDeadlines();

  constructor(
    private readonly config: AppConfig,
    private readonly urlPolicy: UrlPolicy,
  ) {
    this.userAgent = `${config.serviceName}-Webhook/1.0 (+${config.docsUrl})`;
    this.agent = new Agent({
      // Per origin. Several endpoints can share an origin (one host, several paths), and a hanging
      // one must not take the connections of the others: the dispatcher limits each endpoint.
      connections: config.dispatchConcurrency,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      headersTimeout: config.deliveryTimeoutMs,
      bodyTimeout: config.deliveryTimeoutMs,
      connect: { timeout: config.deliveryTimeoutMs, lookup: urlPolicy.lookup },
    });
  }

  async send(target: SendRequest, timeoutMs = this.config.deliveryTimeoutMs): Promise<SendResult> {
    const startedAt = new Date();
    const started = performance.now();
    const finish = (fields: Omit<SendResult, 'startedAt' | 'durationMs'>): SendResult => ({
      startedAt,
      durationMs: Math.round(performance.now() - started),
      ...fields,
    });
    const signal = this.deadlines.start(timeoutMs);
    try {
      const url = new URL(target.url);
      // net.connect never calls `lookup` for an IP literal, so literals are checked here.
      this.urlPolicy.assertAddressAllowed(url.hostname);
      const timestamp = String(Date.now());
      const response = await request(url, {
        dispatcher: this.agent,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': this.userAgent,
          'x-webhook-id': target.eventId,
          'x-webhook-timestamp': timestamp,
          'x-webhook-signature': signPayload(target.secret, timestamp, target.body),
        },
        body: target.body,
        signal,
      });
      const statusCode = response.statusCode;
      const body = await readExcerpt(response.body);
      let succeeded = statusCode >= 200 && statusCode < 300;
      let error: string | null = null;
      if (statusCode >= 300 && statusCode < 400) {
        const location = response.headers.location;
        error = `redirect ${statusCode} not followed${typeof location === 'string' ? ` (Location: ${location.slice(0, 200)})` : ''}`;
      } else if (!succeeded) {
        error = `HTTP ${statusCode}`;
      } else if (body.failure) {
        // A 2xx acknowledges only as a whole answer within the attempt's time limit (CONTRACT §1
        // "one attempt's whole time limit"): a body that trickles past it or is cut off by the
        // receiver fails the attempt (a retry may duplicate, which at-least-once allows; a lost
        // event it does not). Measured in test/hostile-receivers.e2e-spec.ts.
        succeeded = false;
        error = `${describeBodyFailure(body.failure.error, signal, timeoutMs)} (HTTP ${statusCode}, ${body.received} bytes received)`;
      }
      return finish({ statusCode, error, responseBody: body.excerpt, succeeded });
    } catch (caught) {
      return finish({ statusCode: null, error: describeError(caught, signal, timeoutMs), responseBody: null, succeeded: false });
    } finally {
      this.deadlines.end(signal);
    }
  }

  /**
   * By now the dispatcher has drained its attempts or, past SHUTDOWN_TIMEOUT_MS, given their claims
   * back; whatever is still in flight is abandoned, so it is aborted (destroy) rather than awaited
   * (close waited up to DELIVERY_TIMEOUT_MS more, test/graceful-shutdown.e2e-spec.ts).
   */
  async onApplicationShutdown(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }
}

interface Excerpt {
  /** The first 4 KiB at most, or null when the body was empty. */
  excerpt: string | null;
  /** Bytes read (at most a chunk more than 4 KiB). */
  received: number;
  /** Why the body ended before its end without our cutting it (reset, time limit), if it did. */
  failure?: { error: unknown };
}

/**
 * Reads at most 4 KiB and drops the rest: a short body is read to its end (the connection stays
 * reusable); a longer one is cut off by destroying the stream, so 50 MB are never read (the
 * receiver gets rid of a few MiB of socket buffers, then the connection is gone).
 */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(error?: Error): unknown }): Promise<Excerpt> {
  const chunks: Buffer[] = [];
  let size = 0;
  let failure: Excerpt['failure'];
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_EXCERPT_BYTES) {
        body.destroy();
        break;
      }
    }
  } catch (error) {
    // Cut short after the status line arrived (reset, time limit): keep what was read.
    failure = { error };
  }
  // PostgreSQL text cannot hold NUL: a receiver answering "ok\0" made the whole batch of results
  // fail to write, again and again (found in review). Invalid UTF-8 becomes U+FFFD on decoding.
  const excerpt =
    size === 0 ? null : Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8').replaceAll('\u0000', '\uFFFD');
  return { excerpt, received: size, failure };
}

function describeBodyFailure(error: unknown, signal: DeadlineSignal, timeoutMs: number): string {
  const code = (error as { code?: string } | undefined)?.code;
  if (signal.aborted || code === 'UND_ERR_BODY_TIMEOUT') return `timeout: the response body did not end within ${timeoutMs} ms`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'connection reset while reading the response body';
  return `response body failed (${describeError(error, signal, timeoutMs)})`;
}

function describeError(error: unknown, signal: DeadlineSignal, timeoutMs: number): string {
  if (signal.aborted) return `timeout: no complete answer within ${timeoutMs} ms`;
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  const message = err.cause?.message ?? err.message ?? String(error);
  switch (code) {
    case 'EHOSTBLOCKED':
      return `blocked: ${message}`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return `connection reset (${message})`;
    case 'ENOTFOUND':
      return `host not found (${message})`;
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return `timeout: no complete answer within ${timeoutMs} ms`;
    default: {
      // llhttp's parser errors carry no code in undici 7, only their name.
      if ((error as { name?: string }).name === 'HTTPParserError') return `invalid HTTP response (${message})`;
      if (code && /^ERR_TLS|CERT|SSL/.test(code)) {
        // OpenSSL's own `reason` ("wrong version number"), not its multi-line internal trace.
        const reason = (error as { reason?: string }).reason ?? (err.cause as { reason?: string } | undefined)?.reason;
        return `TLS error (${code}: ${reason ?? message.split('\n')[0]})`;
      }
      return code ? `${code}: ${message}` : message;
    }
  }
}
