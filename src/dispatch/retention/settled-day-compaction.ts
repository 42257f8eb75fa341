import type { PoolClient } from 'pg';
import { type CompactedIndex, dropInterruptedRebuilds, quoteIdent, rebuildIndex } from './index-rebuild';
import { DAY_MS, PARTITIONED_TABLES, dayOfPartition } from './partition-plan';

/**
 * How long after its end a day's partitions are packed: by then nearly every delivery of the day
 * has ended, so few rows come after (a delivery still retrying, which splits a page or two).
 */
export const SETTLE_MS = DAY_MS;

/** The storage parameter a packed index is rebuilt with, which also marks it as done. */
const PACKED = 'fillfactor=100';

/**
 * Packs the indexes of a day's log partitions once the day has settled. Rows reach them out of id
 * order (deliveries end in the order their endpoints answer), so pages split in the middle and a
 * day's indexes end some 70 % full; rebuilt with `fillfactor = 100`, they take a quarter less,
 * which every day kept until retention keeps (docs/operations.md, "Retention"). One day a run, the
 * latest first, so that the first run on a database of many days does not hold the maintenance for
 * hours; the storage parameter left on each rebuilt index is what tells a later run it is done.
 */
export class SettledDayCompaction {
  /** Runs on `client`, outside any transaction, under the maintenance lock. */
  async run(client: PoolClient, nowMs: number): Promise<CompactedIndex[]> {
    const { rows } = await client.query<{ name: string; partition: string; parent: string; bytes: string; packed: boolean }>(
      `SELECT c.relname AS name, p.relname AS partition, i.inhparent::regclass::text AS parent, pg_relation_size(c.oid) AS bytes,
         coalesce(c.reloptions @> ARRAY[$2], false) AS packed
       FROM pg_inherits i
       JOIN pg_class p ON p.oid = i.inhrelid
       JOIN pg_index x ON x.indrelid = p.oid AND x.indisvalid
       JOIN pg_class c ON c.oid = x.indexrelid
       WHERE i.inhparent = ANY($1::regclass[])
       ORDER BY p.relname, c.relname`,
      [PARTITIONED_TABLES.map(({ table }) => table), PACKED],
    );
    await dropInterruptedRebuilds(client, [...new Set(rows.map((row) => row.partition))]);
    const settled = rows.flatMap((row) => {
      const table = PARTITIONED_TABLES.find((candidate) => candidate.table === row.parent)?.table;
      const day = table ? dayOfPartition(table, row.partition) : null;
      return day !== null && !row.packed && (day + 1) * DAY_MS + SETTLE_MS <= nowMs ? [{ ...row, day }] : [];
    });
    const latest = Math.max(...settled.map((row) => row.day));
    const ofDay = settled.filter((row) => row.day === latest);
    const compacted: CompactedIndex[] = [];
    for (const row of ofDay) compacted.push(await this.pack(client, row.name, Number(row.bytes)));
    return compacted;
  }

  private async pack(client: PoolClient, name: string, bytesBefore: number): Promise<CompactedIndex> {
    await client.query(`ALTER INDEX ${quoteIdent(name)} SET (${PACKED})`);
    try {
      return await rebuildIndex(client, name, 'packed once its day settled', bytesBefore);
    } catch (error) {
      // Not marked done: the next run tries again. (A process killed right here leaves it marked
      // and as it was: still whole, only not packed.)
      await client.query(`ALTER INDEX ${quoteIdent(name)} RESET (fillfactor)`);
      throw error;
    }
  }
}
