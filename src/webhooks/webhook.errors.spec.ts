import type { ArgumentsHost } from '@nestjs/common';
import { AllExceptionsFilter } from '../common/all-exceptions.filter';
import { WebhookError, WebhookErrorCode } from './webhook.errors';

/** What the HTTP edge writes for `error`. */
function answer(error: unknown): { status: number; body: unknown } {
  const sent = { status: 0, body: undefined as unknown };
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
    switchToHttp: () => ({ getResponse: () => response, getRequest: () => ({ method: 'PUT', path: '/webhooks/x', headers: {} }) }),
  } as unknown as ArgumentsHost;
  new AllExceptionsFilter().catch(error, host);
  return sent;
}

describe('WebhookError', () => {
  it('answers an unknown endpoint with 404 and one sentence', () => {
    const error = WebhookError.notFound('wh_1');
    expect(error.code).toBe(WebhookErrorCode.NotFound);
    expect(answer(error)).toEqual({ status: 404, body: { statusCode: 404, error: 'Not Found', message: 'Webhook wh_1 not found' } });
  });

  it("answers a refused URL with 400 and the policy's reason as the one problem", () => {
    const error = WebhookError.invalidUrl('url must use https://');
    expect(error.code).toBe(WebhookErrorCode.InvalidUrl);
    expect(answer(error)).toEqual({ status: 400, body: { statusCode: 400, error: 'Bad Request', message: ['url must use https://'] } });
  });

  it('answers an update without any field with 400 naming the fields', () => {
    const error = WebhookError.nothingToUpdate(['name', 'url']);
    expect(error.code).toBe(WebhookErrorCode.NothingToUpdate);
    expect(answer(error).body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['provide at least one of name, url'] });
  });

  it('answers a store at its webhook limit with 409 and the limit', () => {
    const error = WebhookError.limitReached(100);
    expect(error.code).toBe(WebhookErrorCode.LimitReached);
    expect(answer(error)).toEqual({
      status: 409,
      body: {
        statusCode: 409,
        error: 'Conflict',
        message: 'This store already has 100 webhooks, the most a store may hold; delete one before registering another',
      },
    });
  });

  it('is caught by class and code, and is no HTTP exception', () => {
    const error: unknown = WebhookError.notFound('wh_2');
    expect(error).toBeInstanceOf(WebhookError);
    expect(error).not.toHaveProperty('getStatus');
    expect((error as Error).name).toBe('WebhookError');
  });
});
