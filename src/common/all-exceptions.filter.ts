import { STATUS_CODES } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { errorBody } from './error-response';
import { MAX_JSON_DEPTH } from './json-depth';
import { isDatabaseUnavailable, isUnstorableText } from './database-errors';
import { DomainError, DomainErrorKind } from './domain-error';

const DOMAIN_STATUS: Record<DomainErrorKind, number> = {
  [DomainErrorKind.Invalid]: HttpStatus.BAD_REQUEST,
  [DomainErrorKind.Unauthenticated]: HttpStatus.UNAUTHORIZED,
  [DomainErrorKind.Forbidden]: HttpStatus.FORBIDDEN,
  [DomainErrorKind.NotFound]: HttpStatus.NOT_FOUND,
  [DomainErrorKind.Conflict]: HttpStatus.CONFLICT,
  [DomainErrorKind.Unprocessable]: HttpStatus.UNPROCESSABLE_ENTITY,
  [DomainErrorKind.Unavailable]: HttpStatus.SERVICE_UNAVAILABLE,
};

interface BodyParserError extends Error {
  type?: string;
  /** The limit in bytes, on a body over it. */
  limit?: number;
  status?: number;
  expose?: boolean;
}

const BODY_PARSER_ERRORS: Record<string, { status: number; message: string }> = {
  'entity.parse.failed': { status: 400, message: 'Malformed JSON in request body' },
  'entity.too.large': { status: 413, message: 'Request body is larger than the 1 MiB limit' },
  'encoding.unsupported': { status: 415, message: 'Unsupported content encoding' },
  'charset.unsupported': { status: 415, message: 'Unsupported charset; send UTF-8 JSON' },
  'request.aborted': { status: 400, message: 'Request aborted by the client' },
  'request.size.invalid': { status: 400, message: 'Request size did not match Content-Length' },
  'entity.too.deep': { status: 400, message: `JSON body is nested more than ${MAX_JSON_DEPTH} levels deep` },
};

/**
 * Turns every failure into `{statusCode, error, message}`: domain errors by their kind, HTTP
 * exceptions as they are, body-parser failures as 400/413, an unreachable database as 503, anything else as a 500
 * that is logged with the request id and never shows a stack.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request & { id?: string }>();
    if (response.headersSent) return;

    const { status, message } = this.describe(exception, request);
    response.status(status).json(errorBody(status, message));
  }

  private describe(exception: unknown, request: Request & { id?: string }): { status: number; message: string | string[] } {
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const body = exception.getResponse();
      const message = typeof body === 'string' ? body : ((body as { message?: string | string[] }).message ?? exception.message);
      // Several rules of one property can share a message (`limit=abc` breaks three); say it once.
      return { status, message: Array.isArray(message) ? [...new Set(message)] : message };
    }
    if (exception instanceof DomainError) {
      // Invalid input answers a list, like validation; every other kind one sentence.
      return {
        status: DOMAIN_STATUS[exception.kind],
        message: exception.kind === DomainErrorKind.Invalid ? exception.problems : exception.message,
      };
    }
    const parserError = exception as BodyParserError;
    const known = parserError?.type ? BODY_PARSER_ERRORS[parserError.type] : undefined;
    if (known && parserError.type === 'entity.too.large' && typeof parserError.limit === 'number') {
      // Routes have different limits (POST /events/batch takes 10 MiB): say the one that was exceeded.
      return { status: known.status, message: `Request body is larger than the ${formatLimit(parserError.limit)} limit` };
    }
    if (known) return known;
    // Any other client error of the body parser (http-errors with `expose`), such as a body that
    // does not decompress as its Content-Encoding says (zlib/brotli errors wrapped as 400).
    if (parserError?.expose === true && typeof parserError.status === 'number' && parserError.status >= 400 && parserError.status < 500) {
      const encoding = request.headers['content-encoding'];
      const message = encoding
        ? `Request body could not be decoded as Content-Encoding ${String(encoding).slice(0, 40)}`
        : (STATUS_CODES[parserError.status] ?? 'Bad Request');
      return { status: parserError.status, message };
    }
    if (isUnstorableText(exception)) {
      return { status: HttpStatus.BAD_REQUEST, message: 'Text must not contain the NUL character (U+0000)' };
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(`database unavailable during ${request.method} ${request.path}: ${String(exception)}`);
      return { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'The database is unavailable; try again shortly' };
    }
    this.logger.error({ err: exception, requestId: request.id }, `unhandled error during ${request.method} ${request.path}`);
    return {
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      message: `Internal server error (request id ${String(request.id ?? 'unknown')})`,
    };
  }
}

/** A body limit in bytes as the API states it: `1 MiB`, `10 MiB`, or bytes when not whole MiB. */
function formatLimit(bytes: number): string {
  return bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MiB` : `${bytes} bytes`;
}
