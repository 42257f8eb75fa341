/** Connections of the dispatcher's own pool (claims and results, with asynchronous commits). */
export const DISPATCH_CONNECTIONS = 4;

/** The one connection that LISTENs for notifications. */
export const LISTEN_CONNECTIONS = 1;

/** The smallest DB_POOL_SIZE: the dispatcher's pool, the listener and one connection for each of the two others. */
export const MIN_DB_POOL_SIZE = DISPATCH_CONNECTIONS + LISTEN_CONNECTIONS + 2;

export interface ConnectionBudget {
  /** TypeORM's pool: repositories, transactions, migrations. */
  orm: number;
  /** The pool of the hand-written hot statements (publishing, pages of endpoints): see SqlPool. */
  sql: number;
  dispatch: number;
  listen: number;
}

/**
 * DB_POOL_SIZE is every connection the process may open, so that max_connections can be sized by
 * adding up processes. After the fixed dispatcher pool and listener, four in ten of the rest go to
 * the hot statements (each batches its callers, so few connections keep them busy) and the others
 * to TypeORM.
 */
export function connectionBudget(total: number): ConnectionBudget {
  if (total < MIN_DB_POOL_SIZE) throw new RangeError(`DB_POOL_SIZE must be at least ${MIN_DB_POOL_SIZE}`);
  const rest = total - DISPATCH_CONNECTIONS - LISTEN_CONNECTIONS;
  const sql = Math.max(1, Math.floor(rest * 0.4));
  return { orm: rest - sql, sql, dispatch: DISPATCH_CONNECTIONS, listen: LISTEN_CONNECTIONS };
}
