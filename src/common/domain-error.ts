/**
 * What kind of rule a domain error broke. Services speak in these terms; only the HTTP edge
 * (AllExceptionsFilter) turns a kind into a status code, so no service knows HTTP.
 */
export enum DomainErrorKind {
  /** The input breaks a rule of the domain (400). */
  Invalid = 'invalid',
  /** The credential is not (or no longer) accepted (401). */
  Unauthenticated = 'unauthenticated',
  /** The caller may not do this (403). */
  Forbidden = 'forbidden',
  /** No such thing in the caller's store (404). */
  NotFound = 'not_found',
  /** The thing's current state does not allow it (409). */
  Conflict = 'conflict',
  /** Well-formed, but contradicts an earlier request (422). */
  Unprocessable = 'unprocessable',
  /** Could not be done now (it ran out of time); the same request may succeed later (503). */
  Unavailable = 'unavailable',
}

/**
 * Base of every module's error class. A module names its failures with its own `code` enum
 * (e.g. `WebhookErrorCode.LimitReached`) so callers can catch them by class and code.
 */
export abstract class DomainError<Code extends string = string> extends Error {
  protected constructor(
    readonly code: Code,
    readonly kind: DomainErrorKind,
    message: string,
    /** Several problems at once, each its own sentence (validation style); `[message]` by default. */
    readonly problems: string[] = [message],
  ) {
    super(message);
    this.name = new.target.name;
  }
}
