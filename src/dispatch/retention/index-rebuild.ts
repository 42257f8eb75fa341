import type { PoolClient } from 'pg';

/** Why an index was rebuilt, as the maintenance log says it. */
export type CompactionReason = 'left larger by a drained backlog' | 'packed once its day settled';

export interface CompactedIndex {
  name: string;
  reason: CompactionReason;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Rebuilds one index with `REINDEX INDEX CONCURRENTLY`, which lets every write go on meanwhile, and
 * answers its size before and after. Runs outside any transaction.
 */
export async function rebuildIndex(
  client: PoolClient,
  name: string,
  reason: CompactionReason,
  bytesBefore: number,
): Promise<CompactedIndex> {
  await client.query(`REINDEX INDEX CONCURRENTLY ${quoteIdent(name)}`);
  const [{ bytes }] = (await client.query<{ bytes: string }>(`SELECT pg_relation_size($1::regclass) AS bytes`, [quoteIdent(name)])).rows;
  return { name, reason, bytesBefore, bytesAfter: Number(bytes) };
}

/**
 * Drops the invalid copies a rebuild leaves on `tables` when it stops half-way (`<index>_ccnew`,
 * `<index>_ccold`: a lock not granted within the run's lock timeout), before the next try.
 */
export async function dropInterruptedRebuilds(client: PoolClient, tables: readonly string[]): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = ANY($1::regclass[]) AND NOT i.indisvalid AND c.relname ~ '_cc(new|old)[0-9]*$'`,
    [tables.map(quoteIdent)],
  );
  for (const { name } of rows) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${quoteIdent(name)}`);
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
