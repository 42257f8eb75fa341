import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { context, propagation } from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import type { Observable } from 'rxjs';

/**
 * Runs each API request in the trace its `traceparent` header names, so a POST /events (or a
 * test delivery) is a span of the client's trace. Installed only when tracing is on
 * (configure-app.ts): otherwise requests do not pass through it at all. Nest binds the handler
 * to the async context in which `handle()` is called, so the context reaches the services.
 */
export class TraceContextInterceptor implements NestInterceptor {
  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = execution.switchToHttp().getRequest<IncomingMessage | undefined>();
    if (!request?.headers?.traceparent) return next.handle();
    return context.with(propagation.extract(context.active(), request.headers), () => next.handle());
  }
}
