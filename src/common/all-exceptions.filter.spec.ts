import { NotFoundException } from '@nestjs/common';
import { filterAnswer } from '../../test/support/filter-answer';
import { DomainError, DomainErrorKind } from './domain-error';

class ThingError extends DomainError<'missing' | 'bad' | 'busy' | 'mismatch' | 'denied'> {
  constructor(code: ThingError['code'], kind: DomainErrorKind, message: string, problems?: string[]) {
    super(code, kind, message, problems);
  }
}

describe('AllExceptionsFilter', () => {
  it.each([
    [DomainErrorKind.NotFound, 404, 'Not Found'],
    [DomainErrorKind.Conflict, 409, 'Conflict'],
    [DomainErrorKind.Forbidden, 403, 'Forbidden'],
    [DomainErrorKind.Unauthenticated, 401, 'Unauthorized'],
    [DomainErrorKind.Unprocessable, 422, 'Unprocessable Entity'],
    [DomainErrorKind.Unavailable, 503, 'Service Unavailable'],
  ])('answers a domain error of kind %s with %i and its message', (kind, status, error) => {
    expect(filterAnswer(new ThingError('missing', kind, 'Thing th_1 not found'))).toEqual({
      status,
      body: { statusCode: status, error, message: 'Thing th_1 not found' },
    });
  });

  it('answers an invalid-input domain error with 400 and every problem as a list', () => {
    const error = new ThingError('bad', DomainErrorKind.Invalid, 'two problems', ['a is wrong', 'b is wrong']);
    expect(filterAnswer(error)).toEqual({
      status: 400,
      body: { statusCode: 400, error: 'Bad Request', message: ['a is wrong', 'b is wrong'] },
    });
  });

  it('keeps HTTP exceptions as they are', () => {
    expect(filterAnswer(new NotFoundException('No route'))).toEqual({
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: 'No route' },
    });
  });

  it('answers a body over its route’s limit with 413 naming that limit', () => {
    const tooLarge = (limit: number) =>
      Object.assign(new Error('request entity too large'), { type: 'entity.too.large', status: 413, limit });
    expect(filterAnswer(tooLarge(2 ** 20)).body).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message: 'Request body is larger than the 1 MiB limit',
    });
    expect(filterAnswer(tooLarge(10 * 2 ** 20)).body).toMatchObject({ message: 'Request body is larger than the 10 MiB limit' });
    expect(filterAnswer(tooLarge(1000)).body).toMatchObject({ message: 'Request body is larger than the 1000 bytes limit' });
  });

  it('hides anything else behind a 500 that names the request id, never the error', () => {
    const { status, body } = filterAnswer(new Error('secret internals'));
    expect(status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('secret internals');
  });
});
