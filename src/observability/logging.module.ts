import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { LevelWithSilent } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { AppConfig } from '../config/app-config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Query parameters of the API, whose values are worth logging; any other value is redacted. */
const LOGGED_QUERY_PARAMETERS = new Set(['limit', 'cursor', 'isActive', 'event', 'status', 'eventType']);

/**
 * The request URL as logged: the path, and the query with the value of every parameter the API
 * does not take replaced, so that a key or token a client puts in the URL (`?api_key=hlk_…`)
 * never reaches the log (found by test/secrets.e2e-spec.ts).
 */
export function loggedUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark === -1) return url;
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals === -1) return pair;
      const name = pair.slice(0, equals);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // a malformed name is logged as sent, its value not
      }
      return LOGGED_QUERY_PARAMETERS.has(decoded) ? pair : `${name}=[redacted]`;
    })
    .join('&');
  return `${url.slice(0, mark)}?${query}`;
}

/** Reuses a sane incoming X-Request-Id, otherwise makes one; always echoes it on the response. */
export function requestId(req: IncomingMessage & { id?: unknown }, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** The pino-http middleware: one log line per request, registered by configureApp. */
export const HTTP_LOGGER = Symbol('HTTP_LOGGER');

function httpLogger(config: AppConfig): HttpLogger {
  return pinoHttp<IncomingMessage, ServerResponse, never>({
    level: config.logLevel,
    genReqId: requestId,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '[redacted]',
    },
    autoLogging: {
      ignore: (req: IncomingMessage) => /^\/(health|metrics)\b/.test(req.url ?? ''),
    },
    customLogLevel: (_req: IncomingMessage, res: ServerResponse, error?: Error): LevelWithSilent =>
      error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: loggedUrl(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    base: { service: config.serviceName.toLowerCase(), pid: process.pid },
  });
}

@Module({
  providers: [{ provide: HTTP_LOGGER, inject: [AppConfig], useFactory: httpLogger }],
  exports: [HTTP_LOGGER],
})
class HttpLoggerModule {}

/**
 * Structured JSON logs (pino). Every request gets one line when it ends, with its id (`req.id`),
 * method, URL and status; API keys and other credentials are redacted (headers, and query values
 * the API does not take), and request bodies (which may hold secrets) are never logged. Nest's
 * own logger writes through the same pino instance.
 *
 * The request middleware is registered once, by configureApp, rather than by nestjs-pino for
 * every route: nestjs-pino would also run each request in an AsyncLocalStorage (to bind the lines
 * logged during it), which on Node 20 turns on promise hooks for every promise of the process,
 * deliveries included, and which Nest expanded into 20 router layers each request walked
 * (bench/README.md). Lines logged during a request that matter carry its id themselves
 * (AllExceptionsFilter).
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      imports: [HttpLoggerModule],
      inject: [HTTP_LOGGER],
      useFactory: (http: HttpLogger) => ({ pinoHttp: { logger: http.logger }, forRoutes: [] }),
    }),
  ],
})
export class LoggingModule {}
