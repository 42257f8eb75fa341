import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { AppConfig } from '../../config/app-config';
import type { ClientTls, ReceiverAccess } from '../../webhooks/receiver-credentials';
import { UrlPolicy } from '../../webhooks/url-policy';
import { AttemptDeadlines, type DeadlineSignal } from './attempt-deadlines';
import { EGRESS_PROXY_ERROR_CODE, egressConnector } from './egress-connector';
import { ENDPOINT_CACHE_ENTRIES } from './endpoint-cache-size';
import { OAuth2TokenError } from './oauth2-token-request';
import { ReceiverAuthenticator } from './receiver-authenticator';
import { retryAfterMs } from './retry-after';
import { signatureHeaders, type SigningSecret } from './signature';

/** At most this much of a response body is read and kept. */
export const RESPONSE_EXCERPT_BYTES = 4096;

export interface SendRequest {
  url: string;
  eventId: string;
  body: string;
  secret: SigningSecret;
  /** The secret before a rotation, while its overlap lasts. */
  previousSecret?: SigningSecret;
  /** The endpoint's own headers (validated when they were set). */
  headers?: Readonly<Record<string, string>>;
  /** The attempt span's W3C traceparent, sent as the `traceparent` header (tracing on only). */
  traceparent?: string;
  /** The endpoint's receiver auth and client certificate, opened (docs/receivers.md). */
  access?: ReceiverAccess;
}

export interface SendResult {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  /** null on a 2xx answer; otherwise what went wrong, for the attempt log. */
  error: string | null;
  responseBody: string | null;
  succeeded: boolean;
  /** A 429's or 503's Retry-After, in ms from the answer (uncapped), when it had a valid one. */
  retryAfterMs?: number;
}

/**
 * One signed POST of an envelope, with undici (a fraction of axios's CPU per request: see
 * docs/decisions.md). One keep-alive pool per origin, a connect-time `lookup` that only hands out
 * addresses the URL policy accepts (so the socket goes to the address that was checked), no
 * redirects followed, one time limit on the whole attempt, at most 4 KiB of the answer read.
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly userAgent: string;
  private readonly deadlines = new AttemptDeadlines();
  private readonly targets = new TargetCache();
  private readonly receivers: ReceiverAuthenticator;

  constructor(
    private readonly config: AppConfig,
    private readonly urlPolicy: UrlPolicy,
  ) {
    this.userAgent = `${config.serviceName}-Webhook/1.0 (+${config.docsUrl})`;
    this.agent = new Agent(this.agentOptions());
    // Token requests share the deliveries' pool, and so their address checks.
    this.receivers = new ReceiverAuthenticator(this.agent, urlPolicy, config.deliveryTimeoutMs, (tls) => new Agent(this.agentOptions(tls)));
  }

  /** The shared pool's options; with `tls`, those of an endpoint's own pool that presents its client certificate. */
  private agentOptions(tls?: ClientTls): Agent.Options {
    const { config, urlPolicy } = this;
    const clientTls = tls ? { cert: tls.clientCertificate, key: tls.clientKey, ...(tls.ca ? { ca: tls.ca } : {}) } : {};
    return {
      // Per origin. Several endpoints can share an origin (one host, several paths), and a hanging
      // one must not take the connections of the others: the dispatcher limits each endpoint.
      connections: config.dispatchConcurrency,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      headersTimeout: config.deliveryTimeoutMs,
      bodyTimeout: config.deliveryTimeoutMs,
      // Through EGRESS_PROXY_URL when it is set: deliveries, test deliveries and token requests alike.
      connect: refusingSelf(
        egressConnector(config.egressProxy, urlPolicy, { timeout: config.deliveryTimeoutMs, lookup: urlPolicy.lookup, ...clientTls }),
        urlPolicy,
      ),
    };
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
      const url = this.targets.get(target.url);
      // net.connect never calls `lookup` for an IP literal, so literals are checked here.
      this.urlPolicy.assertAddressAllowed(url.hostname);
      const dispatcher = this.receivers.dispatcherFor(target.access, this.agent);
      // Most endpoints have no auth: no await, and no promise, on their attempts.
      const authorization = target.access?.auth ? await this.receivers.authorization(target.access, signal) : undefined;
      let answer = await this.post(url, target, signal, dispatcher, authorization);
      if (answer.statusCode === 401) {
        // An OAuth2 token the receiver no longer takes: one more try, with a new one, in this attempt.
        const renewed = await this.receivers.afterRefusal(target.access, authorization, signal);
        if (renewed !== undefined) answer = await this.post(url, target, signal, dispatcher, renewed);
      }
      const statusCode = answer.statusCode;
      let succeeded = statusCode >= 200 && statusCode < 300;
      let error: string | null = null;
      if (statusCode >= 300 && statusCode < 400) {
        const location = answer.location;
        error = `redirect ${statusCode} not followed${typeof location === 'string' ? ` (Location: ${location.slice(0, 200)})` : ''}`;
      } else if (!succeeded) {
        error = `HTTP ${statusCode}`;
        if ((statusCode === 429 || statusCode === 503) && answer.retryAfter !== undefined) {
          const retryAfter = retryAfterMs(answer.retryAfter, Date.now());
          if (retryAfter !== undefined)
            return finish({ statusCode, error, responseBody: answer.excerpt, succeeded, retryAfterMs: retryAfter });
        }
      } else if (answer.failure) {
        // A 2xx acknowledges only as a whole answer within the attempt's time limit: a body that
        // trickles past it or is cut off by the receiver fails the attempt (a retry may duplicate,
        // which at-least-once allows; a lost event it does not).
        succeeded = false;
        error = `${describeBodyFailure(answer.failure.error, signal, timeoutMs)} (HTTP ${statusCode}, ${answer.received} bytes received)`;
      }
      return finish({ statusCode, error, responseBody: answer.excerpt, succeeded });
    } catch (caught) {
      const error = caught instanceof OAuth2TokenError ? caught.message : describeError(caught, signal, timeoutMs);
      return finish({ statusCode: null, error, responseBody: null, succeeded: false });
    } finally {
      this.deadlines.end(signal);
    }
  }

  /**
   * The POST itself, through undici's `dispatch` with {@link AnswerCollector} rather than
   * `request`: no response stream and no async iterator for an answer of a few bytes, which saves
   * CPU and allocation on every request (docs/scaling.md).
   */
  private post(
    url: ParsedTarget,
    target: SendRequest,
    signal: DeadlineSignal,
    dispatcher: Pick<Dispatcher, 'dispatch'>,
    authorization: string | undefined,
  ): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      dispatcher.dispatch(
        {
          origin: url.origin,
          path: url.path,
          method: 'POST',
          headers: {
            ...target.headers,
            ...(authorization === undefined ? {} : { authorization }),
            'content-type': 'application/json',
            'user-agent': this.userAgent,
            ...(target.traceparent === undefined ? {} : { traceparent: target.traceparent }),
            ...signatureHeaders(
              this.config.signatureHeaders,
              target.eventId,
              target.body,
              target.secret,
              target.previousSecret,
              Date.now(),
            ),
          },
          body: target.body,
        },
        new AnswerCollector(signal, resolve, reject),
      );
    });
  }

  /**
   * By now the dispatcher has drained its attempts or, past SHUTDOWN_TIMEOUT_MS, given their claims
   * back; whatever is still in flight is abandoned, so it is aborted (destroy) rather than awaited
   * (close waited up to DELIVERY_TIMEOUT_MS more, test/graceful-shutdown.e2e-spec.ts).
   */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.agent.destroy().catch(() => undefined), this.receivers.destroy()]);
  }
}

/** What the receiver answered, as far as it is kept. */
interface Answer {
  statusCode: number;
  /** The Location header of a redirect, not followed. */
  location: string | string[] | undefined;
  retryAfter: string | string[] | undefined;
  /** The first 4 KiB at most, or null when the body was empty. */
  excerpt: string | null;
  /** Bytes read (at most a chunk more than 4 KiB). */
  received: number;
  /** Why the body ended before its end without our cutting it (reset, time limit), if it did. */
  failure?: { error: unknown };
}

/** Tells undici that the rest of a long answer is not wanted (never reported: the answer is settled). */
class ExcerptComplete extends Error {}

/** The reason given to undici when an attempt's time is up (describeError reports it from the signal). */
const deadlineError = (): Error => new Error('attempt deadline');

/**
 * Collects one answer: the status and Location of the final (non-1xx) response and at most 4 KiB
 * of its body. A short body is read to its end (the connection stays reusable); a longer one is
 * cut off by aborting the request, which closes the connection, so 50 MB are never read. The
 * attempt's deadline aborts the request wherever it is: still queued for a connection (at its
 * start), waiting for the answer, or reading the body.
 */
class AnswerCollector implements Dispatcher.DispatchHandler {
  private controller?: Dispatcher.DispatchController;
  private statusCode = 0;
  private location: string | string[] | undefined;
  private retryAfter: string | string[] | undefined;
  private readonly chunks: Buffer[] = [];
  private received = 0;
  private settled = false;
  private readonly onDeadline = (): void => this.controller?.abort(deadlineError());

  constructor(
    private readonly signal: DeadlineSignal,
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    signal.on('abort', this.onDeadline); // fires at most once; removed when the answer is settled
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal.aborted) controller.abort(deadlineError());
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 1xx: the final answer follows
    this.statusCode = statusCode;
    this.location = headers.location;
    this.retryAfter = headers['retry-after'];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.received += chunk.length;
    if (this.received >= RESPONSE_EXCERPT_BYTES) {
      this.settle();
      controller.abort(new ExcerptComplete());
    }
  }

  onResponseEnd(): void {
    this.settle();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settled) return;
    // Cut short after the status line arrived (reset, time limit): keep what was read.
    if (this.statusCode !== 0) this.settle({ error });
    else this.fail(error);
  }

  private settle(failure?: Answer['failure']): void {
    if (!this.end()) return;
    // PostgreSQL text cannot hold NUL: a receiver answering "ok\0" made the whole batch of results
    // fail to write, again and again (found in review). Invalid UTF-8 becomes U+FFFD on decoding.
    const excerpt =
      this.received === 0
        ? null
        : Buffer.concat(this.chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8').replaceAll('\u0000', '\uFFFD');
    this.resolve({
      statusCode: this.statusCode,
      location: this.location,
      retryAfter: this.retryAfter,
      excerpt,
      received: this.received,
      failure,
    });
  }

  private fail(error: unknown): void {
    if (this.end()) this.reject(error);
  }

  /** Marks the answer settled and drops the deadline's listener; false when it already was. */
  private end(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.signal.off('abort', this.onDeadline);
    return true;
  }
}

interface ParsedTarget {
  origin: string;
  /** Path and query, as sent in the request line. */
  path: string;
  hostname: string;
}

/**
 * Endpoint URLs parsed once, not on every attempt: an endpoint receives many deliveries, and a
 * WHATWG URL parse per attempt showed up in the dispatcher's allocations. Bounded, the least
 * recently used going first.
 */
class TargetCache {
  private readonly parsed = new LRUCache<string, ParsedTarget>({ max: ENDPOINT_CACHE_ENTRIES });

  get(url: string): ParsedTarget {
    let target = this.parsed.get(url);
    if (target === undefined) {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}`, hostname: parsed.hostname };
      this.parsed.set(url, target);
    }
    return target;
  }
}

/**
 * Wraps a connector so that no connection reaches this service's own API: PUBLIC_URL's host and
 * port are refused before connecting, and a socket whose far end is the address and port the
 * server listens on (whatever name led there) is closed before a byte is sent. Once per
 * connection, not per request.
 */
function refusingSelf(connector: buildConnector.connector, urlPolicy: UrlPolicy): buildConnector.connector {
  return (options, callback) => {
    try {
      urlPolicy.assertNotPublicOrigin({ protocol: options.protocol, hostname: options.hostname, port: options.port ?? '' });
    } catch (error) {
      callback(error as Error, null);
      return;
    }
    connector(options, (error, socket) => {
      if (error !== null) return callback(error, null);
      const refused = urlPolicy.selfConnectionError(options.hostname, socket.remoteAddress, socket.remotePort);
      if (refused === undefined) return callback(null, socket);
      socket.destroy();
      callback(refused, null);
    });
  };
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
    case EGRESS_PROXY_ERROR_CODE:
      return message;
    case 'EHOSTBLOCKED':
    case 'ESELF':
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
