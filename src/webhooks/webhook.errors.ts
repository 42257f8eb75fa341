import { DomainError, DomainErrorKind } from '../common/domain-error';

export enum WebhookErrorCode {
  NotFound = 'webhook_not_found',
  InvalidUrl = 'invalid_webhook_url',
  NothingToUpdate = 'nothing_to_update',
  LimitReached = 'webhook_limit_reached',
  ScheduleTooLong = 'retry_schedule_too_long',
  InvalidFilter = 'invalid_filter',
  InvalidHeaders = 'invalid_webhook_headers',
  InvalidCredentials = 'invalid_receiver_credentials',
}

/**
 * What the endpoint operations can refuse. Other modules (dispatch, events) reach endpoints through
 * `WebhooksService.require` and get this class too; the HTTP edge maps the kind to a status.
 */
export class WebhookError extends DomainError<WebhookErrorCode> {
  private constructor(code: WebhookErrorCode, kind: DomainErrorKind, message: string) {
    super(code, kind, message);
  }

  /** Also for another store's endpoint: its existence is not revealed. */
  static notFound(id: string): WebhookError {
    return new WebhookError(WebhookErrorCode.NotFound, DomainErrorKind.NotFound, `Webhook ${id} not found`);
  }

  /** `reason` is the URL policy's sentence ("url must use https://"). */
  static invalidUrl(reason: string): WebhookError {
    return new WebhookError(WebhookErrorCode.InvalidUrl, DomainErrorKind.Invalid, reason);
  }

  static nothingToUpdate(fields: readonly string[]): WebhookError {
    return new WebhookError(WebhookErrorCode.NothingToUpdate, DomainErrorKind.Invalid, `provide at least one of ${fields.join(', ')}`);
  }

  /** `reason` names the header ("headers: …"). */
  static invalidHeaders(reason: string): WebhookError {
    return new WebhookError(WebhookErrorCode.InvalidHeaders, DomainErrorKind.Invalid, reason);
  }

  /** `reason` names the field of auth or tls ("auth.tokenUrl: …"). */
  static invalidCredentials(reason: string): WebhookError {
    return new WebhookError(WebhookErrorCode.InvalidCredentials, DomainErrorKind.Invalid, reason);
  }

  /** `reason` starts with the field, `filter` (the parser's message, say). */
  static invalidFilter(reason: string): WebhookError {
    return new WebhookError(WebhookErrorCode.InvalidFilter, DomainErrorKind.Invalid, reason);
  }

  /** The endpoint's retrySchedule lasts longer than a delivery may stay pending (MAX_DELIVERY_AGE). */
  static scheduleTooLong(schedule: string, maxAge: string): WebhookError {
    return new WebhookError(
      WebhookErrorCode.ScheduleTooLong,
      DomainErrorKind.Invalid,
      `retrySchedule must add up to at most MAX_DELIVERY_AGE (${maxAge}), the longest a delivery stays pending; this one adds up to ${schedule}`,
    );
  }

  /** The store holds `limit` webhooks already (MAX_WEBHOOKS_PER_STORE). */
  static limitReached(limit: number): WebhookError {
    return new WebhookError(
      WebhookErrorCode.LimitReached,
      DomainErrorKind.Conflict,
      `This store already has ${limit} webhooks, the most a store may hold; delete one before registering another`,
    );
  }
}
