import type { PoolClient } from 'pg';
import { type CompactedIndex, dropInterruptedRebuilds, rebuildIndex } from './index-rebuild';

/** An index smaller than this is left as it is: a rebuild would give back less. */
export const MIN_COMPACTED_BYTES = 1024 * 1024;
/** About what a fresh entry of the queue's widest index takes (two ids of some 30 characters, pages 90 % full). */
const FRESH_ENTRY_BYTES = 128;
/** An index this many times the size a fresh one of the queue's rows would take is rebuilt. */
const BLOAT_FACTOR = 4;

/**
 * Gives back the room the queue's indexes kept after a backlog drained. `VACUUM` frees their
 * emptied pages for reuse but never returns them, so indexes sized for the largest backlog the
 * queue ever held would stay that size; each index far larger than its rows need is rebuilt with
 * `REINDEX CONCURRENTLY`, which lets claims, publishes and outcomes go on meanwhile, and costs
 * one read of the queue's table, small once the backlog drained (docs/operations.md). An index a rebuild
 * stopped half-way (a lock not granted within the run's lock timeout) left invalid is dropped
 * first.
 */
export class QueueCompaction {
  constructor(private readonly minBytes = MIN_COMPACTED_BYTES) {}

  /** Runs on `client`, outside any transaction, under the maintenance lock. */
  async run(client: PoolClient): Promise<CompactedIndex[]> {
    await dropInterruptedRebuilds(client, ['delivery_queue']);
    const { rows } = await client.query<{ name: string; bytes: string; live: string }>(
      `SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes,
         greatest(coalesce(s.n_live_tup, 0), t.reltuples, 0)::bigint AS live
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid
       JOIN pg_class t ON t.oid = i.indrelid
       LEFT JOIN pg_stat_user_tables s ON s.relid = t.oid
       WHERE i.indrelid = 'delivery_queue'::regclass AND i.indisvalid
       ORDER BY c.relname`,
    );
    const compacted: CompactedIndex[] = [];
    for (const row of rows) {
      const bytesBefore = Number(row.bytes);
      if (!shouldCompact(bytesBefore, Number(row.live), this.minBytes)) continue;
      compacted.push(await rebuildIndex(client, row.name, 'left larger by a drained backlog', bytesBefore));
    }
    return compacted;
  }
}

/** Whether an index of `bytes` over `liveRows` rows is worth a rebuild. */
export function shouldCompact(bytes: number, liveRows: number, minBytes = MIN_COMPACTED_BYTES): boolean {
  return bytes >= minBytes && bytes > liveRows * FRESH_ENTRY_BYTES * BLOAT_FACTOR;
}
