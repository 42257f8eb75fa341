import { timeDigits } from '../../common/ids';

export const DAY_MS = 86_400_000;

/**
 * The tables partitioned by day, each on a time-ordered id: events on their id, ended deliveries
 * on theirs (which carries the event's time), attempts on their delivery's. Listed in the order their
 * partitions of one day are dropped: the rows that point at others first.
 */
export const PARTITIONED_TABLES = [
  { table: 'delivery_attempts', prefix: 'del_' },
  { table: 'delivery_log', prefix: 'del_' },
  { table: 'events', prefix: 'evt_' },
] as const;

export type PartitionedTable = (typeof PARTITIONED_TABLES)[number]['table'];

/** Days since 1970-01-01 (UTC) of a time in milliseconds. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** `events_p20261125`: the partition of `table` holding the ids made on that UTC day. */
export function partitionName(table: PartitionedTable, day: number): string {
  return `${table}_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;
}

/** The day of a partition named by {@link partitionName}, or null for any other name. */
export function dayOfPartition(table: PartitionedTable, name: string): number | null {
  const match = new RegExp(`^${table}_p(\\d{4})(\\d{2})(\\d{2})$`).exec(name);
  if (!match) return null;
  return dayOf(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
}

/** The id range of one day: every id made that day sorts in [from, to). */
export function dayBounds(prefix: string, day: number): { from: string; to: string } {
  return { from: prefix + timeDigits(day * DAY_MS), to: prefix + timeDigits((day + 1) * DAY_MS) };
}

/**
 * The lowest id still within retention: ids below it were made more than `retentionDays` ago.
 * With retention off (0), the bare prefix, below every id.
 */
export function retentionFloor(prefix: string, nowMs: number, retentionDays: number): string {
  return retentionDays > 0 ? prefix + timeDigits(Math.max(0, nowMs - retentionDays * DAY_MS)) : prefix;
}

export interface PartitionPlan {
  /** Days to create, so that ids made from today to `aheadDays` ahead have a partition. */
  create: number[];
  /** Days whose every row is older than retention, oldest first. */
  drop: number[];
}

/** Which daily partitions to create and which to drop, given the days that exist. */
export function planPartitions(existing: Iterable<number>, nowMs: number, retentionDays: number, aheadDays: number): PartitionPlan {
  const days = new Set(existing);
  const today = dayOf(nowMs);
  const create: number[] = [];
  for (let day = today; day <= today + aheadDays; day++) if (!days.has(day)) create.push(day);
  // A day goes once its end is more than `retentionDays` behind now: none of its rows is younger.
  const drop =
    retentionDays > 0 ? [...days].filter((day) => (day + 1) * DAY_MS <= nowMs - retentionDays * DAY_MS).sort((a, b) => a - b) : [];
  return { create, drop };
}
