import type { ArgumentsHost } from '@nestjs/common';
import { NotFoundException } from '@nestjs/common';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { DomainError, DomainErrorKind } from './domain-error';

class ThingError extends DomainError<'missing' | 'bad' | 'busy' | 'mismatch' | 'denied'> {
  constructor(code: ThingError['code'], kind: DomainErrorKind, message: string, problems?: string[]) {
    super(code, kind, message, problems);
  }
}

function answer(exception: unknown): { status: number; body: unknown } {
  const sent: { status: number; body: unknown } = { status: 0, body: undefined };
  const response = {
    headersSent: false,
    status(code: number) {
      sent.status = code;
      return this;
    },
    json(body: unknown) {
      sent.body = body;
    },
  };
  const host = {
    switchToHttp: () => ({ getResponse: () => response, getRequest: () => ({ method: 'GET', path: '/x', headers: {} }) }),
  } as unknown as ArgumentsHost;
  new AllExceptionsFilter().catch(exception, host);
  return sent;
}

describe('AllExceptionsFilter', () => {
  it.each([
    [DomainErrorKind.NotFound, 404, 'Not Found'],
    [DomainErrorKind.Conflict, 409, 'Conflict'],
    [DomainErrorKind.Forbidden, 403, 'Forbidden'],
    [DomainErrorKind.Unprocessable, 422, 'Unprocessable Entity'],
  ])('answers a domain error of kind %s with %i and its message', (kind, status, error) => {
    expect(answer(new ThingError('missing', kind, 'Thing th_1 not found'))).toEqual({
      status,
      body: { statusCode: status, error, message: 'Thing th_1 not found' },
    });
  });

  it('answers an invalid-input domain error with 400 and every problem as a list', () => {
    const error = new ThingError('bad', DomainErrorKind.Invalid, 'two problems', ['a is wrong', 'b is wrong']);
    expect(answer(error)).toEqual({ status: 400, body: { statusCode: 400, error: 'Bad Request', message: ['a is wrong', 'b is wrong'] } });
  });

  it('keeps HTTP exceptions as they are', () => {
    expect(answer(new NotFoundException('No route'))).toEqual({
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: 'No route' },
    });
  });

  it('hides anything else behind a 500 that names the request id, never the error', () => {
    const { status, body } = answer(new Error('secret internals'));
    expect(status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('secret internals');
  });
});
