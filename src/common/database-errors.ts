/** Node network errors and PostgreSQL SQLSTATE classes that mean "the database is not there". */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);
const UNAVAILABLE_STATES = /^(08|57P0[1-4]|53300)/; // connection exceptions, shutdown, too many connections
/**
 * What the driver says without a SQLSTATE class of its own. "not currently accepting connections"
 * is 55000 (ALTER DATABASE … ALLOW_CONNECTIONS false, a database being dropped or restored);
 * TypeORM's "already released" errors are a transaction whose connection was cut under it.
 */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Connection refused|is not currently accepting connections|connection provided by a query runner was already released|Query runner already released/i;
const UNAVAILABLE_NAMES = new Set(['QueryRunnerProviderAlreadyReleasedError', 'QueryRunnerAlreadyReleasedError']);

/** Whether an error means that PostgreSQL is unreachable (as opposed to a bug or a bad query). */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const candidate = current as { code?: unknown; name?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof candidate.code === 'string' && (NETWORK_CODES.has(candidate.code) || UNAVAILABLE_STATES.test(candidate.code))) {
      return true;
    }
    if (typeof candidate.name === 'string' && UNAVAILABLE_NAMES.has(candidate.name)) return true;
    if (typeof candidate.message === 'string' && UNAVAILABLE_MESSAGES.test(candidate.message)) return true;
    current = candidate.driverError ?? candidate.cause;
  }
  return false;
}

/** Whether PostgreSQL refused a write because a referenced row does not exist (SQLSTATE 23503). */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23503';
}

/** Whether PostgreSQL cancelled a statement that ran past its statement_timeout (SQLSTATE 57014). */
export function isStatementTimeout(error: unknown): boolean {
  return sqlStateOf(error) === '57014';
}

/** The SQLSTATE of a driver error, also when TypeORM wraps it (`driverError`) or it is a `cause`. */
function sqlStateOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const candidate = current as { code?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof candidate.code === 'string' && /^[0-9A-Z]{5}$/.test(candidate.code)) return candidate.code;
    current = candidate.driverError ?? candidate.cause;
  }
  return undefined;
}

/**
 * Whether PostgreSQL refused a text value itself: a NUL character (U+0000), which no text column
 * can hold, or bytes that are not valid UTF-8 (SQLSTATE 22021, 22P05). The input was bad, not the
 * server, so this is a 400.
 */
export function isUnstorableText(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state === '22021' || state === '22P05';
}
