/** Node network errors and PostgreSQL SQLSTATE classes that mean "the database is not there". */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);
const UNAVAILABLE_STATES = /^(08|57P0[1-4]|53300)/; // connection exceptions, shutdown, too many connections

/** Whether an error means that PostgreSQL is unreachable (as opposed to a bug or a bad query). */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const candidate = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof candidate.code === 'string' && (NETWORK_CODES.has(candidate.code) || UNAVAILABLE_STATES.test(candidate.code))) {
      return true;
    }
    if (
      typeof candidate.message === 'string' &&
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Connection refused/i.test(
        candidate.message,
      )
    ) {
      return true;
    }
    current = candidate.driverError ?? candidate.cause;
  }
  return false;
}
