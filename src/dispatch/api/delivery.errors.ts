import { DomainError, DomainErrorKind } from '../../common/domain-error';

export enum DeliveryErrorCode {
  NotFound = 'delivery_not_found',
  StillPending = 'delivery_still_pending',
  AttemptsExhausted = 'delivery_attempts_exhausted',
  WebhookInactive = 'webhook_inactive',
  InvalidReplayWindow = 'invalid_replay_window',
  ReplayRunning = 'replay_running',
  ReplayTimedOut = 'replay_timed_out',
}

/** What the delivery log's operations can refuse; the HTTP edge maps the kind to a status. */
export class DeliveryError extends DomainError<DeliveryErrorCode> {
  private constructor(code: DeliveryErrorCode, kind: DomainErrorKind, message: string) {
    super(code, kind, message);
  }

  static notFound(id: string): DeliveryError {
    return new DeliveryError(DeliveryErrorCode.NotFound, DomainErrorKind.NotFound, `Delivery ${id} not found`);
  }

  static stillPending(id: string): DeliveryError {
    return new DeliveryError(
      DeliveryErrorCode.StillPending,
      DomainErrorKind.Conflict,
      `Delivery ${id} is still pending; retry it once it has finished`,
    );
  }

  /** The delivery has had every attempt it may ever get (MAX_ATTEMPTS_PER_DELIVERY), manual retries included. */
  static attemptsExhausted(id: string, maxAttempts: number): DeliveryError {
    return new DeliveryError(
      DeliveryErrorCode.AttemptsExhausted,
      DomainErrorKind.Conflict,
      `Delivery ${id} has had ${maxAttempts} attempts, the most a delivery may have (MAX_ATTEMPTS_PER_DELIVERY); it cannot be retried again`,
    );
  }

  static webhookInactive(webhookId: string, action: 'retrying' | 'replaying' = 'retrying'): DeliveryError {
    return new DeliveryError(
      DeliveryErrorCode.WebhookInactive,
      DomainErrorKind.Conflict,
      `Webhook ${webhookId} is inactive; re-enable it (PUT isActive: true) before ${action}`,
    );
  }

  /** Another replay or retry-failed of the endpoint is running: one at a time per endpoint. */
  static replayRunning(webhookId: string): DeliveryError {
    return new DeliveryError(
      DeliveryErrorCode.ReplayRunning,
      DomainErrorKind.Conflict,
      `A replay or retry-failed of webhook ${webhookId} is already running; send this request again once it has answered`,
    );
  }

  /** The request's statements ran past REPLAY_TIMEOUT_MS and were cancelled: nothing was queued. */
  static replayTimedOut(timeoutMs: number): DeliveryError {
    return new DeliveryError(
      DeliveryErrorCode.ReplayTimedOut,
      DomainErrorKind.Unavailable,
      `The request took longer than ${timeoutMs} ms and was cancelled, queuing nothing; try again shortly`,
    );
  }

  /** `reason` says what is wrong with the window ("since must be earlier than until"). */
  static invalidReplayWindow(reason: string): DeliveryError {
    return new DeliveryError(DeliveryErrorCode.InvalidReplayWindow, DomainErrorKind.Invalid, reason);
  }
}
