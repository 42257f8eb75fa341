import { statement } from '../../database/sql';
import { logEnded, UNLEASED } from './delivery.sql';
import { sqlIdFloor } from './sql-id-floor';

/** At most `$2` pending deliveries `$1` ms old or older, and not in flight (see below). */
const OLD_PENDING = `SELECT id, store_id FROM delivery_queue d
    WHERE d.id < ${sqlIdFloor('del', 'now() - make_interval(secs => $1::double precision / 1000)')}
      AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
      AND (restarted_at IS NULL OR restarted_at <= now() - make_interval(secs => $1::double precision / 1000))
      AND ${UNLEASED('d')}
    LIMIT $2`;

/**
 * The pending deliveries older than `$1` ms, at most `$2`, ended `failed` with `$3` as their last
 * error and moved from the queue to the log. Old means on the database's clock: the event's time
 * (the id, which bounds the read of the queue's key) and the delivery's own `created_at` (a replay
 * creates it later) and `restarted_at` (a person's retry) all that far back. Waiting ones are
 * included whatever holds them: a retry not yet due, an ordered delivery held behind an earlier
 * one (`next_attempt_at` NULL), one a rate limit put off. One in flight is left to finish its
 * attempt (its lease still runs); one whose worker died (the lease ran out) is not. SKIP LOCKED,
 * so a claim and another process's expiry are never waited for. Answers how many it ended.
 */
export const EXPIRE_DELIVERIES = statement(
  'expire-deliveries',
  `
  WITH expired AS (
    ${OLD_PENDING}
    FOR UPDATE SKIP LOCKED
  ), ended AS (
    DELETE FROM delivery_queue d USING expired x WHERE d.id = x.id AND d.store_id = x.store_id
    RETURNING d.*
  ), logged AS (
    ${logEnded('ended', "'failed'", '$3')}
  )
  SELECT count(*)::int AS ended FROM ended`,
);

/**
 * {@link EXPIRE_DELIVERIES} on a Citus cluster, which locks no rows across shards: the expired
 * deliveries are found first, then each is ended only if it still qualifies when the update
 * reaches it (a claim that took it meanwhile keeps it; the update waits for that claim to commit).
 */
export const EXPIRE_DELIVERIES_ON_CLUSTER = statement(
  'expire-deliveries-on-cluster',
  `
  WITH expired AS (
    ${OLD_PENDING}
  ), ended AS (
    DELETE FROM delivery_queue d USING expired x
    WHERE d.id = x.id AND d.store_id = x.store_id AND ${UNLEASED('d')}
    RETURNING d.*
  ), logged AS (
    ${logEnded('ended', "'failed'", '$3')}
  )
  SELECT count(*)::int AS ended FROM ended`,
);
