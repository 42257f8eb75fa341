import { MigrationInterface, QueryRunner } from 'typeorm';
import type { Query } from './migration-query';

/**
 * Fewer foreign-key checks on the rows every delivery writes (docs/architecture.md, "Storage").
 * Each check looks up and locks the row it points at; the log's two were a third of the cost of
 * writing a log row.
 *
 * - `delivery_log` loses both. A log row is only ever written from a queue row removed in the same
 *   statement, and the queue keeps its endpoint's key, so they told nothing new. What the
 *   endpoint's key still did, deleting an endpoint's ended deliveries with it, a trigger on
 *   `webhooks` does. It runs after the queue's own cascade (triggers fire by name, `RI_…` first),
 *   which waits for any outcome moving one of the endpoint's deliveries to the log; the trigger's
 *   statement then sees that row and deletes it too.
 * - `delivery_queue` loses its store's key: its endpoint's key names the store too, and an
 *   endpoint's store exists (`webhooks_store_id_fkey`).
 *
 * On a Citus coordinator every key stays: a trigger on a distributed table runs on its shards
 * only with `citus.enable_unsafe_triggers`, which this does not ask an operator for.
 */
export class LogWithoutForeignKeys1797100000000 implements MigrationInterface {
  name = 'LogWithoutForeignKeys1797100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (await distributed(queryRunner)) return;
    await queryRunner.query(`ALTER TABLE delivery_log DROP CONSTRAINT IF EXISTS deliveries_store_id_fkey`);
    await queryRunner.query(`ALTER TABLE delivery_log DROP CONSTRAINT IF EXISTS deliveries_webhook_id_fkey`);
    await queryRunner.query(`ALTER TABLE delivery_queue DROP CONSTRAINT IF EXISTS delivery_queue_store_id_fkey`);
    await queryRunner.query(`
      CREATE FUNCTION delete_endpoint_log() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM delivery_log WHERE webhook_id = OLD.id AND store_id = OLD.store_id;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(
      `CREATE TRIGGER webhooks_delete_log AFTER DELETE ON webhooks FOR EACH ROW EXECUTE FUNCTION delete_endpoint_log()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (await distributed(queryRunner)) return;
    await restoreLogKeys((sql, params) => queryRunner.query(sql, params));
  }
}

/**
 * Undoes the migration where it ran: the trigger goes and the keys come back. Also run by the
 * Citus distribution, for a database migrated on plain PostgreSQL and then given the extension,
 * since Citus distributes no table with a trigger. Nothing where the trigger is absent.
 */
export async function restoreLogKeys(q: Query): Promise<void> {
  const [{ present }] = await q<{ present: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'webhooks_delete_log' AND tgrelid = 'webhooks'::regclass) AS present`,
  );
  if (!present) return;
  await q(`DROP TRIGGER webhooks_delete_log ON webhooks`);
  await q(`DROP FUNCTION IF EXISTS delete_endpoint_log()`);
  await q(`ALTER TABLE delivery_log ADD CONSTRAINT deliveries_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id)`);
  await q(
    `ALTER TABLE delivery_log ADD CONSTRAINT deliveries_webhook_id_fkey
     FOREIGN KEY (webhook_id, store_id) REFERENCES webhooks (id, store_id) ON DELETE CASCADE`,
  );
  await q(`ALTER TABLE delivery_queue ADD CONSTRAINT delivery_queue_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id)`);
}

/** Whether the log is a Citus distributed table. */
async function distributed(queryRunner: QueryRunner): Promise<boolean> {
  const [{ extension }] = (await queryRunner.query(
    `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS extension`,
  )) as Array<{
    extension: boolean;
  }>;
  if (!extension) return false;
  const [{ done }] = (await queryRunner.query(
    `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'delivery_log'::regclass) AS done`,
  )) as Array<{ done: boolean }>;
  return done;
}
