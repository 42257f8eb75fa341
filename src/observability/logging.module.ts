import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { pino, type Logger as PinoLogger } from 'pino';
import { AppConfig } from '../config/app-config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Query parameters of the API, whose values are worth logging; any other value is redacted. */
const LOGGED_QUERY_PARAMETERS = new Set(['limit', 'cursor', 'isActive', 'event', 'status', 'eventType']);

/**
 * The request URL as logged: the path, and the query with the value of every parameter the API
 * does not take replaced, so that a key or token a client puts in the URL (`?api_key=hlk_…`)
 * never reaches the log.
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

/** The request-logging middleware, registered by configureApp. */
export const HTTP_LOGGER = Symbol('HTTP_LOGGER');
/** The root pino logger: Nest's logger and the request lines write through it. */
const PINO = Symbol('PINO');

/** Probes are logged only at debug: a load balancer asks every few seconds. */
const PROBES = /^\/(health|metrics)\b/;

/**
 * Lines go to stdout synchronously: a `write` per line on the main thread, so a line logged is a
 * line written, also when the process dies right after. pino's default (sonic-boom, asynchronous)
 * hands each line to libuv's thread pool when no write is under way, which at a few hundred
 * requests a second is one thread hand-off per request, measurably more CPU. A stdout whose
 * reader stalls now slows the process instead of growing an unbounded buffer in it.
 */
function rootLogger(config: AppConfig): PinoLogger {
  return pino(
    {
      level: config.logLevel,
      // For a request or headers logged by mistake anywhere: the request lines below carry none.
      redact: {
        paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
        censor: '[redacted]',
      },
      base: { service: config.serviceName.toLowerCase(), pid: process.pid },
    },
    pino.destination({ dest: 1, sync: true }),
  );
}

/**
 * One line per request when its answer has been sent (or the client went away), with the fields
 * and messages pino-http writes: `req` (id, method, URL with foreign query values redacted),
 * `res.statusCode`, `responseTime` in ms, "request completed" (warn for 4xx), "request errored"
 * (5xx) or "request aborted". Not pino-http itself: it builds two child loggers and serializes
 * the request up front for each request, a large share of the API's throughput (docs/decisions.md).
 *
 * At LOG_LEVEL=debug (or trace) also a "request received" line as each request arrives, with its
 * body's declared type and length (so a request that never completes is seen), and the probes'
 * lines, at debug. Whether debug is on is read once: below it, a request costs nothing more.
 */
export function requestLogging(logger: PinoLogger): RequestHandler {
  const debug = logger.isLevelEnabled('debug');
  return (req: Request, res: Response, next: NextFunction) => {
    // Express keeps the full URL in originalUrl; routers may rewrite req.url on the way.
    const url = req.originalUrl ?? req.url;
    const probe = PROBES.test(url);
    if (probe && !debug) return next();
    if (debug && !probe) {
      const { 'content-type': contentType, 'content-length': contentLength } = req.headers;
      logger.debug(
        {
          req: { id: req.id, method: req.method, url: loggedUrl(url), contentType, contentLength, remoteAddress: req.socket.remoteAddress },
        },
        'request received',
      );
    }
    const startedAt = Date.now();
    const done = (): void => {
      res.off('finish', done);
      res.off('close', done);
      const line = {
        req: { id: req.id, method: req.method, url: loggedUrl(url) },
        res: { statusCode: res.statusCode },
        responseTime: Date.now() - startedAt,
      };
      if (probe) logger.debug(line, 'request completed');
      else if (res.statusCode >= 500) logger.error(line, 'request errored');
      else if (!res.writableEnded || req.readableAborted) logger.warn(line, 'request aborted');
      else if (res.statusCode >= 400) logger.warn(line, 'request completed');
      else logger.info(line, 'request completed');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}

@Module({
  providers: [
    { provide: PINO, inject: [AppConfig], useFactory: rootLogger },
    { provide: HTTP_LOGGER, inject: [PINO], useFactory: requestLogging },
  ],
  exports: [PINO, HTTP_LOGGER],
})
class HttpLoggerModule {}

@Module({
  imports: [
    LoggerModule.forRootAsync({
      imports: [HttpLoggerModule],
      inject: [PINO],
      useFactory: (logger: PinoLogger) => ({ pinoHttp: { logger }, forRoutes: [] }),
    }),
  ],
})
export class LoggingModule {}
