import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorResponse } from './error-response';

export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (malformed JSON, wrong types, unknown fields, failed rules); nothing was changed',
  404: 'Unknown id (or one that belongs to another store)',
  409: 'State conflict',
  413: 'Body over 1 MiB',
  422: 'Well-formed but refused: an Idempotency-Key already used for another event',
  503: 'The database is unavailable',
};

/** Documents error answers in the `{statusCode, error, message}` shape. */
export function ApiErrors(...statuses: Array<400 | 404 | 409 | 413 | 422 | 503>): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: ERROR_DESCRIPTIONS[status], type: ErrorResponse })),
  );
}
