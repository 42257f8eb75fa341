import { statement } from '../../database/sql';
import { claimSteps, LOCKED_COLUMNS, ONE_STORE, UNLEASED } from './delivery.sql';

/**
 * The stores with due work on a Citus cluster, one answer from every shard. The walk of the claim
 * on one server (a recursive probe of the per-store due index) cannot run across shards; this
 * reads the due entries of that index on each shard instead.
 */
export const DUE_STORES = statement(
  'due-stores',
  `
  SELECT DISTINCT d.store_id FROM delivery_queue d
  WHERE d.next_attempt_at <= now() + make_interval(secs => $1::double precision / 1000) AND ${UNLEASED('d')}`,
);

/**
 * The claim of one store, `$8`, on a Citus cluster (docs/scaling.md, "Citus"): the claim of one
 * server (DeliveryRepository.claimDue) with that store's turn only, every table read and written
 * by `store_id = $8`, so that each step runs on the one shard holding the store and
 * `FOR UPDATE SKIP LOCKED` locks its rows (Citus locks no rows across shards). `$2` is the store's
 * share, `$9`-`$11` the stores' slots, `$12` the error of an interrupted attempt; the others are as
 * in the one-server claim. Answers its rows, with the store in `crowdedStores` when it had as many
 * due as it took.
 */
export const CLAIM_ONE_STORE = statement(
  'claim-one-store',
  `
  WITH locked AS (
    SELECT 1 AS turn, ${LOCKED_COLUMNS}
    FROM delivery_queue d
    WHERE d.store_id = $8
      AND d.next_attempt_at <= now() + make_interval(secs => $7::double precision / 1000) AND ${UNLEASED('d')}
      AND NOT (d.webhook_id = ANY ($1::text[])) AND NOT ($8 = ANY ($9::text[]))
    ORDER BY d.store_id, d.next_attempt_at
    LIMIT least(coalesce(($10::jsonb ->> $8::text)::int, $11), $2)
    FOR UPDATE SKIP LOCKED
${claimSteps(ONE_STORE)}
  SELECT c.*, false AS "turnsCut", $8::text AS "lastStore",
    CASE WHEN c.id IS NOT DISTINCT FROM (SELECT min(id) FROM sent) THEN
      CASE WHEN (SELECT count(*) FROM locked) >= least(coalesce(($10::jsonb ->> $8::text)::int, $11), $2) THEN ARRAY[$8::text] ELSE '{}'::text[] END
    END AS "crowdedStores",
    CASE WHEN c.id IS NOT DISTINCT FROM (SELECT min(id) FROM sent) THEN
      (SELECT array_agg(DISTINCT extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000) FROM deferred)
    END AS "deferredDueInMs"
  FROM (SELECT 1) m LEFT JOIN sent c ON true`,
);
