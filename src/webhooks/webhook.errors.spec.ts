import { filterAnswer } from '../../test/support/filter-answer';
import { WebhookError, WebhookErrorCode } from './webhook.errors';

/** What the HTTP edge answers for `error` on a PUT of an endpoint. */
const putAnswer = (error: unknown) => filterAnswer(error, { method: 'PUT', path: '/webhooks/x' });

describe('WebhookError', () => {
  it('answers an unknown endpoint with 404 and one sentence', () => {
    const error = WebhookError.notFound('wh_1');
    expect(error.code).toBe(WebhookErrorCode.NotFound);
    expect(putAnswer(error)).toEqual({ status: 404, body: { statusCode: 404, error: 'Not Found', message: 'Webhook wh_1 not found' } });
  });

  it("answers a refused URL with 400 and the policy's reason as the one problem", () => {
    const error = WebhookError.invalidUrl('url must use https://');
    expect(error.code).toBe(WebhookErrorCode.InvalidUrl);
    expect(putAnswer(error)).toEqual({ status: 400, body: { statusCode: 400, error: 'Bad Request', message: ['url must use https://'] } });
  });

  it('answers an update without any field with 400 naming the fields', () => {
    const error = WebhookError.nothingToUpdate(['name', 'url']);
    expect(error.code).toBe(WebhookErrorCode.NothingToUpdate);
    expect(putAnswer(error).body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['provide at least one of name, url'] });
  });

  it('answers a retrySchedule longer than MAX_DELIVERY_AGE with 400 naming the field and both durations', () => {
    const error = WebhookError.scheduleTooLong('2h', '6s');
    expect(error.code).toBe(WebhookErrorCode.ScheduleTooLong);
    expect(putAnswer(error).body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: ['retrySchedule must add up to at most MAX_DELIVERY_AGE (6s), the longest a delivery stays pending; this one adds up to 2h'],
    });
  });

  it('answers a store at its webhook limit with 409 and the limit', () => {
    const error = WebhookError.limitReached(100);
    expect(error.code).toBe(WebhookErrorCode.LimitReached);
    expect(putAnswer(error)).toEqual({
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
