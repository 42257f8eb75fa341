import { DomainError, DomainErrorKind } from '../common/domain-error';

export enum DeliveryErrorCode {
  NotFound = 'delivery_not_found',
  StillPending = 'delivery_still_pending',
  WebhookInactive = 'webhook_inactive',
  InvalidReplayWindow = 'invalid_replay_window',
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

  static webhookInactive(webhookId: string, action: 'retrying' | 'replaying' = 'retrying'): DeliveryError {
    return new DeliveryError(
      DeliveryErrorCode.WebhookInactive,
      DomainErrorKind.Conflict,
      `Webhook ${webhookId} is inactive; re-enable it (PUT isActive: true) before ${action}`,
    );
  }

  /** `reason` says what is wrong with the window ("since must be earlier than until"). */
  static invalidReplayWindow(reason: string): DeliveryError {
    return new DeliveryError(DeliveryErrorCode.InvalidReplayWindow, DomainErrorKind.Invalid, reason);
  }
}
