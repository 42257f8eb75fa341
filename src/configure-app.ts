import type { NestExpressApplication } from '@nestjs/platform-express';
import { json, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { httpMetrics } from './observability/http-metrics';
import { Metrics } from './observability/metrics';
import { TraceContextInterceptor } from './observability/trace-context.interceptor';
import { Tracing } from './observability/tracing';
import { HTTP_LOGGER, requestId } from './observability/logging.module';
import type { AppConfig } from './config/app-config';
import { API_PREFIX, PREFIX_OPTIONS } from './common/api-prefix';
import { answerClientErrorsInJson } from './common/client-errors';
import { rejectDeliveryHeaders } from './common/delivery-headers';
import { errorBody } from './common/error-response';
import { JSON_MEDIA_TYPES, requireJsonContentType } from './common/json-content-type';
import { rejectDeepJson } from './common/json-depth';
import { setupSwagger } from './common/swagger';
import { eventWebhooks } from './catalogue/event-webhooks';

type BodyParserError = Error & { type?: string; status?: number };

/** 1 MiB: 413 above it. */
export const BODY_LIMIT = '1mb';

/**
 * POST /events/batch carries up to 1,000 events, so its body may be 10 MiB (about 10 KiB an event);
 * every other route keeps {@link BODY_LIMIT}.
 */
export const BATCH_BODY_LIMIT = '10mb';
export const BATCH_PATH = `/${API_PREFIX}/events/batch`;

/**
 * Everything that is applied to the application object rather than declared in a module; shared
 * by main.ts and the end-to-end specs so that both run the same server.
 */
export function configureApp(app: NestExpressApplication, config: AppConfig): void {
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  // No ETag on API answers: hashing every JSON body cost time on each request for a header no
  // client of a management API revalidates with (the dashboard's files carry their own).
  app.set('etag', false);
  answerClientErrorsInJson(app.getHttpServer());
  // Security headers on every answer (helmet's defaults). Its CSP suits Swagger UI, which loads
  // only its own files, minus `upgrade-insecure-requests`: over plain http://localhost it would
  // send the page's scripts and "Try it out" calls to https:// and break the docs. The dashboard
  // replaces the CSP with its own, stricter one (DashboardController).
  app.use(helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
  // Before the body parser, so that even a malformed or oversized body gets a request id and is counted.
  app.use((req: Request & { id?: string }, res: Response, next: NextFunction) => {
    req.id = requestId(req, res);
    next();
  });
  app.use(app.get<RequestHandler>(HTTP_LOGGER));
  app.use(httpMetrics(app.get(Metrics)));
  app.use(`/${API_PREFIX}`, rejectDeliveryHeaders);
  app.use(requireJsonContentType);
  // The batch route's parser first: the general one then finds its body read and passes it on.
  app.use(BATCH_PATH, json({ limit: BATCH_BODY_LIMIT, type: JSON_MEDIA_TYPES }));
  app.useBodyParser('json', { limit: BODY_LIMIT, type: JSON_MEDIA_TYPES });
  // Nest turns body-parser's SyntaxError into a 400 carrying the parser's own text ("Unexpected
  // token 'n', "null" is not valid JSON"); passed on as a plain error, it reaches AllExceptionsFilter
  // with its `type`, and the filter answers with its own message.
  app.use((error: BodyParserError, _req: Request, _res: Response, next: NextFunction) => {
    if (!(error instanceof SyntaxError && error.type)) return next(error);
    next(Object.assign(new Error(error.message), { type: error.type, status: error.status }));
  });
  app.use(rejectDeepJson);
  app.setGlobalPrefix(API_PREFIX, PREFIX_OPTIONS);
  if (!config.runsApi) {
    app.use(`/${API_PREFIX}`, (req: Request, res: Response, next: NextFunction) => {
      if (/^\/(health|metrics)\b/.test(req.path)) return next();
      res.status(404).json(errorBody(404, 'This process runs with ROLE=worker; the API is served by ROLE=api or ROLE=all'));
    });
  }
  // Only with tracing on: off, requests do not pass through it at all.
  if (app.get(Tracing).enabled) app.useGlobalInterceptors(new TraceContextInterceptor());
  setupSwagger(app, config, eventWebhooks());
}
