import { MigrationInterface, QueryRunner } from 'typeorm';
import { restoreLogKeys } from './1797100000000-LogWithoutForeignKeys';
import type { Query } from './migration-query';

/** Small tables looked up before a store is known (by a key's or a session's hash), or deployment-wide: a copy on every node. */
export const REFERENCE_TABLES = ['stores', 'api_keys', 'settings', 'portal_sessions'] as const;

/** The table every other store-owned table is co-located with. */
const ANCHOR = 'webhooks';

/**
 * On a Citus coordinator (the `citus` extension present), spreads the schema over the worker nodes
 * (docs/scaling.md, "Citus"): `stores`, `api_keys`, `settings` and `portal_sessions` become
 * reference tables, and every other table with a `store_id` is distributed on it, co-located with
 * `webhooks`, so that all of a store's rows live on one node. On plain PostgreSQL it does nothing.
 *
 * - Foreign keys go first and come back after: Citus converts a table that references a reference
 *   table to a local table of its own, which fails on the day partitions' check constraints, and a
 *   foreign key between a distributed and a local table is refused.
 * - Every key already holds store_id (PartitionedLog), and the partitioned log tables are
 *   distributed with their partitions; partitions made later are distributed as they are attached.
 * - The number of shards is the server's `citus.shard_count` (ALTER DATABASE … SET to choose it).
 */
export class CitusDistribution1796800000000 implements MigrationInterface {
  name = 'CitusDistribution1796800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await distributeOnCitus((sql, params) => queryRunner.query(sql, params));
  }

  async down(): Promise<void> {
    throw new Error('CitusDistribution cannot be undone: undistribute_table() each table by hand');
  }
}

/**
 * The distribution itself, in the caller's transaction; nothing without the citus extension or
 * when done already. Also run at every start after the migrations (run-migrations.ts), so that a
 * database migrated on one server and then restored on a coordinator is distributed too.
 * Answers whether it distributed the tables.
 */
export async function distributeOnCitus(q: Query): Promise<boolean> {
  const [{ citus }] = await q<{ citus: boolean }>(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`);
  if (!citus) return false;
  const [{ done }] = await q<{ done: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = $1::regclass) AS done`,
    [ANCHOR],
  );
  if (done) return false;
  // Writes to reference tables and shards in one transaction go over one connection per node.
  await q(`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`);
  // Migrated on plain PostgreSQL: Citus distributes no table with a trigger, and keeps the log's keys.
  await restoreLogKeys(q);

  const reference = (
    await q<{ name: string }>(
      `SELECT relname AS name FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname = ANY ($1) AND relkind = 'r'`,
      [REFERENCE_TABLES],
    )
  ).map((row) => row.name);
  // Store-owned: every other table (not a partition) with a store_id, the anchor first.
  const distributed = (
    await q<{ name: string }>(
      `SELECT t.relname AS name FROM pg_class t
         WHERE t.relnamespace = current_schema()::regnamespace AND t.relkind IN ('r', 'p') AND NOT t.relispartition
           AND t.relname <> ALL ($1)
           AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'store_id' AND NOT a.attisdropped)
         ORDER BY t.relname <> $2, t.relname`,
      [REFERENCE_TABLES, ANCHOR],
    )
  ).map((row) => row.name);
  const tables = [...reference, ...distributed];

  // The parents' foreign keys (a partition's are clones that follow its parent's).
  const foreignKeys = await q<{ table: string; name: string; definition: string }>(
    `SELECT c.conrelid::regclass::text AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c
       WHERE c.contype = 'f' AND c.conparentid = 0
         AND (c.conrelid::regclass::text = ANY ($1) OR c.confrelid::regclass::text = ANY ($1))
       ORDER BY 1, 2`,
    [tables],
  );
  for (const fk of foreignKeys) await q(`ALTER TABLE ${fk.table} DROP CONSTRAINT "${fk.name}"`);

  for (const table of reference) await q(`SELECT create_reference_table($1)`, [table]);
  for (const table of distributed) {
    await q(`SELECT create_distributed_table($1, 'store_id', colocate_with => $2)`, [table, table === ANCHOR ? 'default' : ANCHOR]);
  }
  // The rows were copied into the shards; the coordinator's own copies are no longer read.
  for (const table of tables) await q(`SELECT truncate_local_data_after_distributing_table($1)`, [table]);

  for (const fk of foreignKeys) await q(`ALTER TABLE ${fk.table} ADD CONSTRAINT "${fk.name}" ${fk.definition}`);
  return true;
}
