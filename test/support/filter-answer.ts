import type { ArgumentsHost } from '@nestjs/common';
import { AllExceptionsFilter } from '../../src/common/all-exceptions.filter';

/** What the HTTP edge answers for `exception`: the status and JSON body AllExceptionsFilter writes. */
export function filterAnswer(exception: unknown, request = { method: 'GET', path: '/x' }): { status: number; body: unknown } {
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
    switchToHttp: () => ({ getResponse: () => response, getRequest: () => ({ ...request, headers: {} }) }),
  } as unknown as ArgumentsHost;
  new AllExceptionsFilter().catch(exception, host);
  return sent;
}
