import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pending deliveries move out of the day-partitioned log into `delivery_queue`, a table of their
 * own (docs/architecture.md, "Storage"); the log, renamed `delivery_log`, takes a delivery once,
 * when it ends, and is otherwise only read and dropped by day. `deliveries` becomes the view of
 * both, with the columns the table had, for every reader that wants a delivery wherever it is.
 *
 * - A claim writes only columns no index of the queue holds (the lease, the counts), and the
 *   table keeps half of each page free (fillfactor 50), so that the update is HOT: no new index
 *   entry, and the old version is pruned on the page.
 * - The queue is not partitioned: its size follows what is pending, not the retention, so a
 *   claim reads one table however many days are kept.
 * - The lease is `lease_until`; `next_attempt_at` stays when the delivery came due, so that a
 *   claim does not move it in the due indexes. The view shows a leased delivery's
 *   `next_attempt_at` as the end of its lease, as the table did.
 * - On a Citus coordinator the queue is distributed on `store_id` beside the other store tables.
 */
export class HotQueue1797000000000 implements MigrationInterface {
  name = 'HotQueue1797000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q = (sql: string, params?: unknown[]) => queryRunner.query(sql, params) as Promise<Array<Record<string, unknown>>>;
    await q(`CREATE TABLE delivery_queue (
        id                text NOT NULL,
        store_id          text NOT NULL,
        event_id          text NOT NULL,
        webhook_id        text NOT NULL,
        event_type        text NOT NULL,
        ordered           boolean NOT NULL DEFAULT false,
        next_attempt_at   timestamptz,
        lease_token       text,
        lease_until       timestamptz,
        attempt_count     integer NOT NULL DEFAULT 0,
        cycle_attempts    integer NOT NULL DEFAULT 0,
        last_status_code  integer,
        last_error        text,
        created_at        timestamptz NOT NULL DEFAULT now(),
        restarted_at      timestamptz,
        updated_at        timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (id, store_id)
      ) WITH (fillfactor = 50)`);
    const [{ extension }] = await q(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS extension`);
    const citus =
      extension === true &&
      (await q(`SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'webhooks'::regclass) AS done`))[0].done === true;
    if (citus) {
      await q(`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`);
      await q(`SELECT create_distributed_table('delivery_queue', 'store_id', colocate_with => 'webhooks')`);
    }
    await q(`ALTER TABLE delivery_queue ADD CONSTRAINT delivery_queue_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id)`);
    await q(
      `ALTER TABLE delivery_queue ADD CONSTRAINT delivery_queue_webhook_id_fkey
       FOREIGN KEY (webhook_id, store_id) REFERENCES webhooks (id, store_id) ON DELETE CASCADE`,
    );
    // Each store's deliveries in due order (the claim's turns, when the next one is due); an
    // endpoint's (its page of deliveries, ending its waiting ones); an ordered endpoint's in event
    // order (the claim's gate, the release when one ends). No index of every store's due times:
    // a generic plan of the claim would read it, every store's rows, for each store's turn.
    await q(`CREATE INDEX delivery_queue_store_due_idx ON delivery_queue (store_id, next_attempt_at)`);
    await q(`CREATE INDEX delivery_queue_webhook_idx ON delivery_queue (webhook_id, id)`);
    await q(`CREATE INDEX delivery_queue_ordered_idx ON delivery_queue (webhook_id, event_id) WHERE ordered`);

    await q(
      `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, ordered, next_attempt_at, lease_token, lease_until,
         attempt_count, cycle_attempts, last_status_code, last_error, created_at, restarted_at, updated_at)
       SELECT id, store_id, event_id, webhook_id, event_type, ordered, next_attempt_at, lease_token,
         CASE WHEN lease_token IS NOT NULL THEN next_attempt_at END,
         attempt_count, cycle_attempts, last_status_code, last_error, created_at, restarted_at, updated_at
       FROM deliveries WHERE status = 'pending'`,
    );
    await q(`DELETE FROM deliveries WHERE status = 'pending'`);
    for (const index of ['deliveries_store_due_idx', 'deliveries_unleased_due_idx', 'deliveries_due_idx', 'deliveries_ordered_idx']) {
      await q(`DROP INDEX IF EXISTS ${index}`);
    }
    await q(`ALTER TABLE deliveries DROP COLUMN next_attempt_at, DROP COLUMN lease_token, DROP COLUMN cycle_attempts`);

    await q(`ALTER TABLE deliveries RENAME TO delivery_log`);
    const partitions = await q(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'delivery_log'::regclass AND c.relname LIKE 'deliveries\\_p%'`,
    );
    for (const { name } of partitions) {
      await q(`ALTER TABLE ${String(name)} RENAME TO ${String(name).replace(/^deliveries_/, 'delivery_log_')}`);
    }
    await q(`CREATE VIEW deliveries AS ${DELIVERIES_VIEW}`);
  }

  async down(): Promise<void> {
    throw new Error('HotQueue cannot be undone: move the queue back into the log by hand');
  }
}

/** Every delivery, pending (the queue) or ended (the log), as one relation with the columns of the old table. */
const DELIVERIES_VIEW = `
  SELECT q.id, q.store_id, q.event_id, q.webhook_id, q.event_type, 'pending'::text AS status, q.attempt_count, q.cycle_attempts,
    coalesce(q.lease_until, q.next_attempt_at) AS next_attempt_at, q.lease_token, q.last_status_code, q.last_error,
    q.created_at, q.updated_at, q.ordered, q.restarted_at
  FROM delivery_queue q
  UNION ALL
  SELECT l.id, l.store_id, l.event_id, l.webhook_id, l.event_type, l.status, l.attempt_count, 0, NULL::timestamptz, NULL::text,
    l.last_status_code, l.last_error, l.created_at, l.updated_at, l.ordered, l.restarted_at
  FROM delivery_log l`;
