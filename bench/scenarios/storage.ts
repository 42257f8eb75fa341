import { Client, type Pool } from 'pg';
import type { EventType } from '../../src/catalogue/event-catalogue';
import type { Bench } from '../lib/bench';
import { publishToEndpoints } from '../lib/batch-publish';
import { ENDPOINTS } from '../lib/config';
import { attemptOutcomes, BENCH_APPLICATION_NAME, BenchDatabase, createDatabase, statusCounts } from '../lib/db';
import { awaitDrain } from '../lib/drain';
import { formatCounts } from '../lib/report';
import { DAY_MS, dayOf } from '../../src/dispatch/retention/partition-plan';
import { QueueCompaction } from '../../src/dispatch/retention/queue-compaction';
import { SettledDayCompaction } from '../../src/dispatch/retention/settled-day-compaction';

const TYPE: EventType = 'order.created';
const PREFIX = '/ok/storage/';

/** One table's bytes on disk (its partitions', indexes' and TOAST's included) at each moment measured. */
interface TableBytes {
  emptyBytes: number;
  pendingBytes: number;
  drainedBytes: number;
  vacuumedBytes: number;
  bytesPerDelivery: number;
  vacuumedBytesPerDelivery: number;
}

/**
 * storage. What a delivered delivery costs PostgreSQL on disk and in WAL: `storageEvents` events to
 * 10 endpoints, published through POST /events/batch as in throughput into a database of its own,
 * then drained by one worker. A ROLE=api process publishes and a ROLE=worker process drains after
 * it, so that the disk is also measured with every delivery still pending.
 */
export async function storage(bench: Bench): Promise<void> {
  const total = bench.sizes.storageEvents * ENDPOINTS;
  bench.log(`storage: ${bench.sizes.storageEvents} events × ${ENDPOINTS} endpoints = ${total} deliveries, bytes on disk and in WAL`);
  // A fresh database, so that what is on disk is this scenario's alone whichever scenarios ran
  // before; swapped in as the benchmark's, since Hookline's environment and the waits read that.
  const shared = bench.db;
  const db = await createDatabase(bench.serverUrl!, '_storage');
  bench.extraDatabases.push(db);
  await bench.stopHookline();
  bench.db = db;
  let own: OwnWal | undefined;
  try {
    const api = await bench.startHookline('storage-publish', undefined, { ROLE: 'api' });
    await bench.createWebhooks(
      TYPE,
      bench.ports.map((_, i) => bench.url(i, `${PREFIX}${i}`)),
    );
    await bench.receiver!.call('clear');
    const empty = await diskByTable(db.pool);
    own = await OwnWal.open(db);
    const checkpointBefore = await redoLsn(db.pool);
    const walStart = await walLsn(db.pool);
    const published = await publishToEndpoints(api.baseUrl, TYPE, bench.sizes.storageEvents);
    const walPublished = await walLsn(db.pool);
    const publishWal = await walSince(db.pool, walStart);
    const pending = await diskByTable(db.pool);
    const pendingCount = (await statusCounts(db.pool, TYPE)).pending ?? 0;
    if (pendingCount !== total) throw new Error(`${pendingCount} of ${total} deliveries pending after publishing, with no worker`);
    bench.log(`  published ${published.deliveries} deliveries in ${published.ms} ms`);
    await bench.stopHookline();

    await bench.startHookline('storage-drain', undefined, { ROLE: 'worker' });
    const { arrived, durable } = await awaitDrain(bench, PREFIX, TYPE, total);
    const walDrained = await walLsn(db.pool);
    const wal = await walSince(db.pool, walStart);
    const drained = await diskByTable(db.pool);
    const ownWal = await own?.bytes(walStart, walPublished, walDrained);
    const checkpointed = checkpointBefore === null ? null : (await redoLsn(db.pool)) !== checkpointBefore;
    const succeeded = durable.counts.succeeded ?? 0;
    if (succeeded !== total || arrived.unique !== total)
      throw new Error(`${arrived.unique} of ${total} arrived, ${succeeded} succeeded in the database: ${JSON.stringify(durable.counts)}`);
    const attempts = await attemptOutcomes(db.pool, TYPE);
    await bench.stopHookline();
    // What autovacuum would do in time, at once; with Hookline stopped, no snapshot holds dead rows back.
    await db.pool.query('VACUUM');
    const vacuumed = await diskByTable(db.pool);
    // What the hourly maintenance then does to the queue's indexes, which VACUUM leaves the size
    // of the backlog they held.
    const client = await db.pool.connect();
    let maintained: Map<string, number>;
    let settled: Map<string, number>;
    try {
      await new QueueCompaction().run(client);
      maintained = await diskByTable(db.pool);
      // And what it does once the day has settled (on the day after tomorrow's clock): packs the day's indexes.
      await new SettledDayCompaction().run(client, (dayOf(Date.now()) + 2) * DAY_MS);
      settled = await diskByTable(db.pool);
    } finally {
      client.release();
    }
    const relations = await diskByRelation(db.pool);

    const perDelivery = (bytes: number): number => Math.round(bytes / total);
    const sum = (sizes: Map<string, number>): number => [...sizes.values()].reduce((a, b) => a + b, 0);
    const tables: Record<string, TableBytes> = {};
    for (const name of [...drained.keys()].sort((a, b) => drained.get(b)! - drained.get(a)!)) {
      tables[name] = {
        emptyBytes: empty.get(name) ?? 0,
        pendingBytes: pending.get(name) ?? 0,
        drainedBytes: drained.get(name)!,
        vacuumedBytes: vacuumed.get(name) ?? 0,
        bytesPerDelivery: perDelivery(drained.get(name)!),
        vacuumedBytesPerDelivery: perDelivery(vacuumed.get(name) ?? 0),
      };
    }
    const figures = {
      storageDeliveries: total,
      storageDiskBytesPerDelivery: perDelivery(sum(drained)),
      storageDiskBytesPerDeliveryVacuumed: perDelivery(sum(vacuumed)),
      storageDiskBytesPerDeliveryMaintained: perDelivery(sum(maintained)),
      storageDiskBytesPerDeliverySettled: perDelivery(sum(settled)),
      storagePendingDiskBytesPerDelivery: perDelivery(sum(pending)),
      storageWalBytesPerDelivery: perDelivery(wal),
      storagePublishWalBytesPerDelivery: perDelivery(publishWal),
      storageOwnWalBytesPerDelivery: ownWal ? perDelivery(ownWal.all) : null,
      storageOwnPublishWalBytesPerDelivery: ownWal ? perDelivery(ownWal.publish) : null,
      storageOwnWalFullPageBytesPerDelivery: ownWal ? perDelivery(ownWal.fullPages) : null,
      storageOwnWalBytesPerDeliveryByKind: ownWal
        ? Object.fromEntries(Object.entries(ownWal.byKind).map(([kind, bytes]) => [kind, perDelivery(bytes)]))
        : null,
      storageEmptyDiskBytes: sum(empty),
      storageCheckpointDuringRun: checkpointed,
      storageAttempts: attempts,
      storageTables: tables,
      storageRelationBytesPerDelivery: Object.fromEntries([...relations].map(([name, bytes]) => [name, perDelivery(bytes)])),
    };
    Object.assign(bench.results, figures);
    bench.row(
      'storage',
      `bytes on disk per delivery (${total}): all pending / all delivered / delivered, then VACUUM / then the maintenance / once the day settled`,
      `${figures.storagePendingDiskBytesPerDelivery} / ${figures.storageDiskBytesPerDelivery} / ${figures.storageDiskBytesPerDeliveryVacuumed} / ${figures.storageDiskBytesPerDeliveryMaintained} / ${figures.storageDiskBytesPerDeliverySettled}`,
    );
    bench.row(
      'storage',
      `WAL bytes per delivery, the server's: publishing / publishing and delivering${checkpointed ? ' (a checkpoint fell in the run)' : ''}`,
      `${figures.storagePublishWalBytesPerDelivery} / ${figures.storageWalBytesPerDelivery}`,
    );
    bench.row(
      'storage',
      "WAL bytes per delivery, this database's records (pg_walinspect): publishing / publishing and delivering (of which full-page images)",
      ownWal
        ? `${figures.storageOwnPublishWalBytesPerDelivery} / ${figures.storageOwnWalBytesPerDelivery} (${figures.storageOwnWalFullPageBytesPerDelivery})`
        : 'not readable',
    );
    bench.row(
      'storage',
      "WAL bytes per delivery, this database's records, by resource manager / record type",
      Object.entries(figures.storageOwnWalBytesPerDeliveryByKind ?? {})
        .filter(([, bytes]) => bytes > 0)
        .map(([kind, bytes]) => `${kind} ${bytes}`)
        .join('; ') || 'not readable',
    );
    bench.row(
      'storage',
      'bytes on disk per delivery once delivered, by table',
      Object.entries(tables)
        .filter(([, t]) => t.bytesPerDelivery > 0)
        .map(([name, t]) => `${name} ${t.bytesPerDelivery}`)
        .join('; '),
    );
    bench.row(
      'storage',
      'bytes on disk per delivery once delivered, then VACUUM, the maintenance and the day settled, by table and index (heap alone under the table name)',
      Object.entries(figures.storageRelationBytesPerDelivery)
        .filter(([, bytes]) => bytes > 0)
        .map(([name, bytes]) => `${name} ${bytes}`)
        .join('; '),
    );
    bench.row('storage', 'attempts by outcome', formatCounts(attempts));
    bench.log(
      `  on disk per delivery: ${figures.storagePendingDiskBytesPerDelivery} pending, ${figures.storageDiskBytesPerDelivery} delivered, ` +
        `${figures.storageDiskBytesPerDeliveryVacuumed} vacuumed, ${figures.storageDiskBytesPerDeliveryMaintained} after the maintenance, ${figures.storageDiskBytesPerDeliverySettled} once the day settled; WAL ${figures.storageWalBytesPerDelivery} per delivery ` +
        `(this database's: ${figures.storageOwnWalBytesPerDelivery ?? 'not readable'})`,
    );
  } finally {
    await own?.close();
    await bench.stopHookline();
    bench.db = shared;
  }
}

/**
 * Bytes on disk of every table of the public schema, each partition counted under the table it
 * belongs to; pg_total_relation_size adds the indexes and TOAST.
 */
async function diskByTable(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ name: string; bytes: string }>(
    `SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text AS name, sum(pg_total_relation_size(c.oid))::bigint AS bytes
     FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'm')
     GROUP BY 1`,
  );
  return new Map(rows.map((row) => [row.name, Number(row.bytes)]));
}

/**
 * Bytes of each table's heap and of each of its indexes, partitions summed under the partitioned
 * table and index they belong to, largest first: where a delivery's bytes are.
 */
async function diskByRelation(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ name: string; bytes: string }>(
    `SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text AS name, sum(pg_relation_size(c.oid))::bigint AS bytes
     FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')
     GROUP BY 1 ORDER BY 2 DESC`,
  );
  return new Map(rows.map((row) => [row.name, Number(row.bytes)]));
}

async function walLsn(pool: Pool): Promise<string> {
  return (await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
}

async function walSince(pool: Pool, lsn: string): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes', [lsn]);
  return Number(rows[0].bytes);
}

/**
 * Where the last checkpoint's redo starts: a checkpoint during the run writes a full image of each
 * page on its next change, which adds to the WAL. Null where the role may not read it.
 */
async function redoLsn(pool: Pool): Promise<string | null> {
  return pool
    .query<{ lsn: string }>('SELECT redo_lsn::text AS lsn FROM pg_control_checkpoint()')
    .then(({ rows }) => rows[0].lsn)
    .catch(() => null);
}

/**
 * The WAL of one database's own records, read back with pg_walinspect: the server's WAL also holds
 * whatever else runs on it (tests, other benchmarks). A temporary replication slot keeps the
 * segments from being recycled by checkpoints until they are read; it goes with the session.
 */
class OwnWal {
  private constructor(
    private readonly client: Client,
    private readonly oid: number,
  ) {}

  /** Undefined for a role that is no superuser, or before PostgreSQL 15. */
  static async open(db: BenchDatabase): Promise<OwnWal | undefined> {
    const client = new Client({ connectionString: db.url, application_name: BENCH_APPLICATION_NAME });
    try {
      await client.connect();
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
      await client.query('SELECT pg_create_physical_replication_slot($1, true, true)', [`${db.name}_wal`]);
      const { rows } = await client.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = current_database()');
      return new OwnWal(client, rows[0].oid);
    } catch {
      await client.end().catch(() => undefined);
      return undefined;
    }
  }

  /**
   * Bytes of the records from `start` to `published` and to `end` that change a page of this
   * database, and the commit records of their transactions.
   */
  async bytes(
    start: string,
    published: string,
    end: string,
  ): Promise<{ publish: number; all: number; fullPages: number; byKind: Record<string, number> }> {
    // pg_walinspect reads only flushed WAL, and Hookline's dispatcher commits asynchronously: the
    // WAL writer flushes it within wal_writer_delay.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await this.client.query<{ flushed: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS flushed', [end]);
      if (rows[0].flushed) break;
      if (Date.now() > deadline) throw new Error(`WAL up to ${end} not flushed within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // One read of the records, by resource manager and record type (an index insert, a heap
    // update, a commit…); the totals are the kinds' sums.
    const { rows } = await this.client.query<{ kind: string; publish: string; total: string; full_pages: string }>(
      `WITH r AS (
         SELECT start_lsn, xid::text AS xid, resource_manager || '/' || split_part(record_type, ' ', 1) AS kind,
           record_length, fpi_length, block_ref ~ $3 AS ours
         FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
       ), writers AS (SELECT DISTINCT xid FROM r WHERE ours AND xid <> '0')
       SELECT kind, coalesce(sum(record_length) FILTER (WHERE start_lsn < $4::pg_lsn), 0)::bigint AS publish,
         sum(record_length)::bigint AS total, sum(fpi_length)::bigint AS full_pages
       FROM r WHERE ours OR xid IN (SELECT xid FROM writers)
       GROUP BY kind ORDER BY total DESC`,
      [start, end, `rel \\d+/${this.oid}/`, published],
    );
    const sum = (column: 'publish' | 'total' | 'full_pages'): number => rows.reduce((bytes, row) => bytes + Number(row[column]), 0);
    return {
      publish: sum('publish'),
      all: sum('total'),
      fullPages: sum('full_pages'),
      byKind: Object.fromEntries(rows.map((row) => [row.kind, Number(row.total)])),
    };
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}
