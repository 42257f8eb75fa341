import { reservedEventTypeMessage, type OperationalEventType } from '../catalogue/event-catalogue';
import { eventTypeNotFoundMessage, unknownEventTypeMessage } from '../catalogue/unknown-event-type';
import { DomainError, DomainErrorKind } from '../common/domain-error';

export enum EventErrorCode {
  UnknownType = 'unknown_event_type',
  ReservedType = 'reserved_event_type',
  InvalidData = 'invalid_event_data',
  /** One or more events of a batch are invalid; `problems` names each by its index. */
  InvalidBatch = 'invalid_event_batch',
  StoreNotFound = 'store_not_found',
  NotFound = 'event_not_found',
  TypeNotFound = 'event_type_not_found',
  IdempotencyKeyReused = 'idempotency_key_reused',
}

/**
 * What publishing or reading an event can refuse. `EventPublisher` throws it to other Nest
 * modules, which catch it by class and `code`; over HTTP the filter maps its kind to a status.
 */
export class EventError extends DomainError<EventErrorCode> {
  private constructor(code: EventErrorCode, kind: DomainErrorKind, message: string, problems?: string[]) {
    super(code, kind, message, problems);
  }

  static unknownType(type: unknown): EventError {
    return new EventError(EventErrorCode.UnknownType, DomainErrorKind.Invalid, unknownEventTypeMessage('type', type));
  }

  /** An operational type (webhook.*): only Hookline publishes those, about a store's own endpoints. */
  static reservedType(type: OperationalEventType): EventError {
    return new EventError(EventErrorCode.ReservedType, DomainErrorKind.Invalid, reservedEventTypeMessage('type', type));
  }

  /** `problems` names each field of `data` that breaks its type's shape. */
  static invalidData(problems: string[]): EventError {
    return new EventError(EventErrorCode.InvalidData, DomainErrorKind.Invalid, problems.join('; '), problems);
  }

  /** `problems` names each bad event of a batch by its index (`events[3].data.total is required`). */
  static invalidBatch(problems: string[]): EventError {
    return new EventError(EventErrorCode.InvalidBatch, DomainErrorKind.Invalid, problems.join('; '), problems);
  }

  static storeNotFound(storeId: string): EventError {
    return new EventError(EventErrorCode.StoreNotFound, DomainErrorKind.NotFound, `Store ${storeId} not found`);
  }

  /** The key belongs to an earlier event of another type or data: nothing was published. */
  static idempotencyKeyReused(key: string, firstEventId: string): EventError {
    return new EventError(
      EventErrorCode.IdempotencyKeyReused,
      DomainErrorKind.Unprocessable,
      `Idempotency-Key ${JSON.stringify(key)} was already used for event ${firstEventId} with a different type or data; use a new key for a new event`,
    );
  }

  /** Keys of a batch held by earlier events of another type or data: nothing of the batch was published. */
  static batchIdempotencyKeysReused(reused: Array<{ index: number; key: string; firstEventId: string }>): EventError {
    const each = reused.map(
      ({ index, key, firstEventId }) =>
        `events[${index}].idempotencyKey ${JSON.stringify(key)} was already used for event ${firstEventId} with a different type or data`,
    );
    return new EventError(
      EventErrorCode.IdempotencyKeyReused,
      DomainErrorKind.Unprocessable,
      `${each.join('; ')}; use a new key for a new event (nothing of the batch was published)`,
    );
  }

  /** GET /event-types/:type of a type not in the catalogue, with the nearest one when it looks like a typo. */
  static typeNotFound(type: string): EventError {
    return new EventError(EventErrorCode.TypeNotFound, DomainErrorKind.NotFound, eventTypeNotFoundMessage(type));
  }

  static notFound(id: string): EventError {
    return new EventError(EventErrorCode.NotFound, DomainErrorKind.NotFound, `Event ${id} not found`);
  }
}
