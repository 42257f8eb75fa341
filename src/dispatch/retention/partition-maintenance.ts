import type { Pool, PoolClient } from 'pg';
import { PARTITIONED_TABLES, type PartitionedTable, dayBounds, dayOfPartition, partitionName, planPartitions } from './partition-plan';
import type { CompactedIndex } from './index-rebuild';
import { QueueCompaction } from './queue-compaction';
import { SettledDayCompaction } from './settled-day-compaction';

/** Any fixed 64-bit number, other than the migrations' lock: one maintenance run at a time across instances. */
const MAINTENANCE_LOCK_KEY = 7_338_249_012;

/**
 * Days of partitions kept ahead of today: ids made on a clock up to this far ahead still have one,
 * and every instance makes its own clock's at start and each hour. Not more: every statement on a
 * log table pays for each partition it has, empty or not, pruned or not (docs/operations.md).
 */
export const AHEAD_DAYS = 2;

/** How long DDL waits for a lock before giving up until the next run, rather than queueing deliveries behind it. */
const LOCK_TIMEOUT = '5s';

export interface DroppedPartition {
  table: PartitionedTable;
  day: number;
  rows: number;
}

export interface MaintenanceReport {
  /** False when another instance held the lock: this run did nothing. */
  ran: boolean;
  created: Array<{ table: PartitionedTable; day: number }>;
  dropped: DroppedPartition[];
  /** Days past retention kept because a delivery of theirs is still pending. */
  keptPending: number[];
  /**
   * Indexes rebuilt: the queue's, to give back the room a drained backlog left (QueueCompaction),
   * and a settled day's, packed (SettledDayCompaction).
   */
  compacted: CompactedIndex[];
}

interface Child {
  name: string;
  day: number;
  attached: boolean;
  detachPending: boolean;
}

/**
 * Creates the daily partitions of the log tables ahead of time (on the caller's clock, which makes
 * the ids) and drops whole days older than retention on the database's clock (docs/operations.md).
 * A day is dropped only when none of its deliveries is still queued; attempts, deliveries and events of
 * the day go in that order. Each partition is detached CONCURRENTLY, so deliveries go on
 * meanwhile, then dropped. One run at a time across instances (an advisory lock); a run that stops
 * half-way is finished by the next. Last, the queue's indexes are rebuilt if a drained backlog
 * left them far larger than their rows need (QueueCompaction), and a settled day's are packed
 * (SettledDayCompaction).
 */
export class PartitionMaintenance {
  /**
   * `concurrently`: detach without blocking deliveries. Citus detaches a distributed table's
   * partition only at once, on every shard (docs/scaling.md, "Citus"), and rebuilds no index
   * concurrently: there no index is rebuilt.
   */
  constructor(
    private readonly pool: Pool,
    private readonly concurrently = true,
    private readonly compaction: QueueCompaction | null = concurrently ? new QueueCompaction() : null,
    private readonly packing: SettledDayCompaction | null = concurrently ? new SettledDayCompaction() : null,
  ) {}

  /** `compact`: rebuild the indexes that need it (not at start: it may take a while). */
  async run(
    nowMs: number,
    retentionDays: number,
    { compact = true, aheadDays = AHEAD_DAYS }: { compact?: boolean; aheadDays?: number } = {},
  ): Promise<MaintenanceReport> {
    const report: MaintenanceReport = { ran: false, created: [], dropped: [], keptPending: [], compacted: [] };
    const client = await this.pool.connect();
    try {
      const [{ locked }] = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MAINTENANCE_LOCK_KEY]))
        .rows;
      if (!locked) return report;
      report.ran = true;
      try {
        await client.query(`SET lock_timeout = '${LOCK_TIMEOUT}'`);
        await this.createAhead(client, nowMs, aheadDays, report);
        // What retention drops follows the database's clock, as every other retention check does
        // (DeliveryLog's floors, DeliveryExpiry): one clock decides what is old.
        const { rows } = await client.query<{ ms: string }>('SELECT extract(epoch FROM now()) * 1000 AS ms');
        await this.dropExpired(client, Number(rows[0].ms), retentionDays, report);
        if (compact && this.compaction) report.compacted.push(...(await this.compaction.run(client)));
        if (compact && this.packing) report.compacted.push(...(await this.packing.run(client, Number(rows[0].ms))));
      } finally {
        await client.query('RESET lock_timeout');
        await client.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
      }
      return report;
    } finally {
      client.release();
    }
  }

  /** Creates the partitions of `days` that do not exist yet, in every log table (tests, the benchmark, clocks ahead). */
  async ensureDays(days: number[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      for (const { table, prefix } of PARTITIONED_TABLES) {
        const existing = new Set((await this.children(client, table)).map((child) => child.day));
        for (const day of days) if (!existing.has(day)) await this.create(client, table, prefix, day);
      }
    } finally {
      client.release();
    }
  }

  private async createAhead(client: PoolClient, nowMs: number, aheadDays: number, report: MaintenanceReport): Promise<void> {
    for (const { table, prefix } of PARTITIONED_TABLES) {
      const children = await this.children(client, table);
      const { create } = planPartitions(
        children.map((child) => child.day),
        nowMs,
        0,
        aheadDays,
      );
      for (const day of create) {
        await this.create(client, table, prefix, day);
        report.created.push({ table, day });
      }
    }
  }

  /**
   * A partition is made apart and then attached: attaching takes a lock that lets deliveries be
   * written meanwhile, where CREATE TABLE … PARTITION OF would block them.
   */
  private async create(client: PoolClient, table: PartitionedTable, prefix: string, day: number): Promise<void> {
    const name = partitionName(table, day);
    const { from, to } = dayBounds(prefix, day);
    await client.query(`CREATE TABLE IF NOT EXISTS ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await client.query(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM ('${from}') TO ('${to}')`);
  }

  private async dropExpired(client: PoolClient, nowMs: number, retentionDays: number, report: MaintenanceReport): Promise<void> {
    if (retentionDays <= 0) return;
    const byTable = new Map<PartitionedTable, Child[]>();
    for (const { table } of PARTITIONED_TABLES) byTable.set(table, await this.children(client, table));
    const allDays = [...byTable.values()].flatMap((children) => children.map((child) => child.day));
    const { drop } = planPartitions(allDays, nowMs, retentionDays, 0);
    for (const day of [...new Set(drop)]) {
      if (await this.holdsPending(client, day)) {
        report.keptPending.push(day);
        continue;
      }
      for (const { table } of PARTITIONED_TABLES) {
        const child = byTable.get(table)!.find((c) => c.day === day);
        if (child) report.dropped.push({ table, day, rows: await this.drop(client, table, child) });
      }
    }
  }

  /**
   * Whether a delivery of the day is still pending: one probe of the queue's key, whose ids carry
   * their event's time. Nothing makes a delivery older than retention pending again (DeliveryLog),
   * so a day found without one stays so.
   */
  private async holdsPending(client: PoolClient, day: number): Promise<boolean> {
    const { from, to } = dayBounds('del_', day);
    const { rows } = await client.query<{ pending: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM delivery_queue WHERE id >= $1 AND id < $2) AS pending`,
      [from, to],
    );
    return rows[0].pending;
  }

  private async drop(client: PoolClient, table: PartitionedTable, child: Child): Promise<number> {
    if (child.detachPending) await client.query(`ALTER TABLE ${table} DETACH PARTITION ${child.name} FINALIZE`);
    else if (child.attached)
      await client.query(`ALTER TABLE ${table} DETACH PARTITION ${child.name}${this.concurrently ? ' CONCURRENTLY' : ''}`);
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${child.name}`);
    await client.query(`DROP TABLE ${child.name}`);
    return rows[0].n;
  }

  /**
   * The daily partitions of `table`, with any left detached (or half detached) by a run that
   * stopped between detaching and dropping.
   */
  private async children(client: PoolClient, table: PartitionedTable): Promise<Child[]> {
    const { rows } = await client.query<{ name: string; attached: boolean; detach_pending: boolean }>(
      `SELECT c.relname AS name, i.inhrelid IS NOT NULL AS attached, coalesce(i.inhdetachpending, false) AS detach_pending
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
       LEFT JOIN pg_inherits i ON i.inhrelid = c.oid AND i.inhparent = $1::regclass
       WHERE c.relkind = 'r' AND c.relname LIKE $2`,
      [table, `${table}\\_p%`],
    );
    return rows.flatMap((row) => {
      const day = dayOfPartition(table, row.name);
      return day === null ? [] : [{ name: row.name, day, attached: row.attached, detachPending: row.detach_pending }];
    });
  }
}
