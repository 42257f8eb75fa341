import type { IdPrefix } from '../../common/ids';

/** The digits of ids (Crockford base32, lower case), as common/ids writes them. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * SQL for the least id of `prefix` made at the time `timeSql` or later: `idFloor` written in SQL,
 * so that a bound on ids follows the database's clock (`now()`) rather than this process's. The
 * expression is stable, so PostgreSQL still skips the partitions outside it at execution.
 */
export function sqlIdFloor(prefix: IdPrefix, timeSql: string): string {
  const ms = `greatest(floor(extract(epoch FROM ${timeSql}) * 1000), 0)::bigint`;
  const digits = Array.from({ length: 10 }, (_, i) => `substr('${ALPHABET}', ((${ms} >> ${5 * (9 - i)}) & 31)::int + 1, 1)`);
  return `('${prefix}_' || ${digits.join(' || ')})`;
}

/**
 * SQL for the least id still within retention on the database's clock, given the parameter that
 * holds RETENTION_DAYS (`$4`); with retention off (0), the bare prefix, below every id. Days of
 * 24 hours, as partition-plan counts them (an interval of days would follow the session's time zone).
 * The floor cut to its prefix rather than a CASE: Citus runs no now() inside a CASE of an update.
 */
export function sqlRetentionFloor(prefix: IdPrefix, daysParam: string): string {
  const floor = sqlIdFloor(prefix, `now() - make_interval(hours => 24 * ${daysParam}::int)`);
  return `left(${floor}, ${prefix.length + 1} + 10 * (${daysParam}::int > 0)::int)`;
}
