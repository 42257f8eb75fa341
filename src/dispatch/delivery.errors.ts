import { DomainError, DomainErrorKind } from '../common/domain-error';

export enum DeliveryErrorCode {
  NotFound = 'delivery_not_found',
  StillPending = 'delivery_still_pending',
  WebhookInactive = 'webhook_inactive',
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

  static webhookInactive(webhookId: string): DeliveryError {
    return new DeliveryError(
      DeliveryErrorCode.WebhookInactive,
      DomainErrorKind.Conflict,
      `Webhook ${webhookId} is inactive; activate it (PUT isActive: true) before retrying`,
    );
  }
}
