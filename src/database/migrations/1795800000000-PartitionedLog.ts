import { MigrationInterface, QueryRunner } from 'typeorm';
import type { Query } from './migration-query';
import { idTime, timeDigits } from '../../common/ids';

const DAY_MS = 86_400_000;
/** Partitions made ahead of today, like the service's own maintenance (dispatch/retention/partition-maintenance.ts). */
const AHEAD_DAYS = 2;

/** Each log table, the id its partitions range over, and that id's prefix. */
const LOG_TABLES = [
  { table: 'events', key: 'id', prefix: 'evt_' },
  { table: 'deliveries', key: 'id', prefix: 'del_' },
  { table: 'delivery_attempts', key: 'delivery_id', prefix: 'del_' },
] as const;

function dayName(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '');
}

/**
 * The log tables (events, deliveries, attempts) become partitioned by day, so retention drops a
 * whole day at once, and every primary key and unique constraint holds store_id, so that the
 * schema can be distributed on it (docs/scaling.md).
 *
 * - events range over their id, deliveries over theirs (which carries the event's time), attempts
 *   over their delivery's: an event, its deliveries and their attempts share a day.
 * - Idempotency keys move to a table of their own: a unique index on a partitioned table must hold
 *   the partition key, and a key is unique per store whatever the event's id.
 * - The foreign keys between the log tables go (the service writes them together and drops them
 *   together; a foreign key would make dropping a day check the other tables row by row).
 * - Two catch-all partitions per table hold ids below and above any time Hookline makes, so rows
 *   written by hand are kept too.
 *
 * Every existing row is copied, whatever columns the tables have by now.
 */
export class PartitionedLog1795800000000 implements MigrationInterface {
  name = 'PartitionedLog1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const q: Query = (sql, params) => queryRunner.query(sql, params);

    await q(`
      CREATE TABLE idempotency_keys (
        store_id    text NOT NULL REFERENCES stores (id),
        key         text NOT NULL,
        event_id    text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (store_id, key)
      )`);
    await q(`CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at)`);
    await q(`INSERT INTO idempotency_keys (store_id, key, event_id, created_at)
             SELECT store_id, idempotency_key, id, created_at FROM events WHERE idempotency_key IS NOT NULL`);

    // Foreign keys pointing at the log tables (deliveries → events, attempts → deliveries, any other).
    for (const fk of await q<{ conname: string; relname: string }>(
      `SELECT c.conname, r.relname FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
       WHERE c.contype = 'f' AND c.confrelid IN ('events'::regclass, 'deliveries'::regclass, 'delivery_attempts'::regclass)`,
    )) {
      await q(`ALTER TABLE "${fk.relname}" DROP CONSTRAINT "${fk.conname}"`);
    }

    const days = await this.occupiedDays(q);
    const today = Math.floor(Date.now() / DAY_MS);
    for (let day = today - 1; day <= today + AHEAD_DAYS; day++) days.add(day);

    for (const { table, key, prefix } of LOG_TABLES) {
      await q(`CREATE TABLE ${table}_new (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (${key})`);
      if (table === 'events') await q(`ALTER TABLE events_new DROP COLUMN idempotency_key`);
      if (table === 'delivery_attempts') await q(`ALTER TABLE delivery_attempts_new ADD COLUMN store_id text NOT NULL`);
      // Ids below '0' or from '8' on are none Hookline makes (2^48 ms is in the year 10889).
      await q(`CREATE TABLE ${table}_p_low PARTITION OF ${table}_new FOR VALUES FROM (MINVALUE) TO ('${prefix}0')`);
      await q(`CREATE TABLE ${table}_p_high PARTITION OF ${table}_new FOR VALUES FROM ('${prefix}8') TO (MAXVALUE)`);
      for (const day of [...days].sort((a, b) => a - b)) {
        await q(
          `CREATE TABLE ${table}_p${dayName(day)} PARTITION OF ${table}_new
           FOR VALUES FROM ('${prefix}${timeDigits(day * DAY_MS)}') TO ('${prefix}${timeDigits((day + 1) * DAY_MS)}')`,
        );
      }
    }

    await this.copy(q, 'events', (column) => `o.${column}`, 'events o');
    await this.copy(q, 'deliveries', (column) => `o.${column}`, 'deliveries o');
    await this.copy(
      q,
      'delivery_attempts',
      (column) => (column === 'store_id' ? 'd.store_id' : `o.${column}`),
      'delivery_attempts o JOIN deliveries d ON d.id = o.delivery_id',
    );

    for (const { table } of LOG_TABLES) {
      await q(`DROP TABLE ${table}`);
      await q(`ALTER TABLE ${table}_new RENAME TO ${table}`);
    }

    // Webhooks: the primary key gains store_id; what referenced webhooks (id) now references (id, store_id).
    const referencing = await q<{ conname: string; relname: string; column: string; ondelete: string }>(
      `SELECT c.conname, r.relname, a.attname AS column,
         CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END AS ondelete
       FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
       WHERE c.contype = 'f' AND c.confrelid = 'webhooks'::regclass`,
    );
    for (const fk of referencing) await q(`ALTER TABLE "${fk.relname}" DROP CONSTRAINT "${fk.conname}"`);
    // A table keyed by its endpoint alone (endpoint_health, endpoint_rate_windows) takes the
    // endpoint's store_id into its rows and its primary key.
    for (const fk of referencing) await this.addStoreId(q, fk.relname, fk.column);
    await q(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_pkey`);
    await q(`ALTER TABLE webhooks ADD PRIMARY KEY (id, store_id)`);
    for (const fk of referencing) {
      await q(
        `ALTER TABLE "${fk.relname}" ADD CONSTRAINT "${fk.conname}"
         FOREIGN KEY ("${fk.column}", store_id) REFERENCES webhooks (id, store_id) ON DELETE ${fk.ondelete}`,
      );
    }

    await q(`ALTER TABLE events ADD PRIMARY KEY (id, store_id)`);
    await q(`ALTER TABLE events ADD CONSTRAINT events_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id)`);
    await q(`CREATE INDEX events_store_idx ON events (store_id, id)`);

    await q(`ALTER TABLE deliveries ADD PRIMARY KEY (id, store_id)`);
    await q(`ALTER TABLE deliveries ADD CONSTRAINT deliveries_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (id)`);
    await q(
      `ALTER TABLE deliveries ADD CONSTRAINT deliveries_webhook_id_fkey
       FOREIGN KEY (webhook_id, store_id) REFERENCES webhooks (id, store_id) ON DELETE CASCADE`,
    );
    // The claim reads only this partial index of each partition: as fast with millions of finished
    // deliveries as with none.
    await q(`CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE status = 'pending'`);
    await q(`CREATE INDEX deliveries_webhook_idx ON deliveries (webhook_id, id)`);
    await q(`CREATE INDEX deliveries_event_idx ON deliveries (event_id)`);
    // An ordered endpoint's pending deliveries in event order (claimDue's gate, recordOutcomes's release).
    await q(`CREATE INDEX deliveries_ordered_idx ON deliveries (webhook_id, event_id) WHERE status = 'pending' AND ordered`);

    await q(`ALTER TABLE delivery_attempts ADD PRIMARY KEY (delivery_id, number, store_id)`);
    // Statistics for the days that hold rows, never for the empty ones: a partition analyzed while
    // empty is known to be empty, and a plan made then reads it whole for each row it looks up once
    // it fills (until autovacuum analyzes it again). A partition never analyzed is assumed to hold
    // some rows, and is looked up by key.
    for (const { table } of LOG_TABLES) {
      for (const day of [...days].sort((a, b) => a - b)) {
        const name = `${table}_p${dayName(day)}`;
        const [{ any }] = await q<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${name}) AS any`);
        if (any) await q(`ANALYZE ${name}`);
      }
    }
  }

  /**
   * Gives `table` the store_id of the endpoint its `column` names, when it has none, and makes its
   * primary key on that column alone hold store_id too.
   */
  private async addStoreId(q: Query, table: string, column: string): Promise<void> {
    const [has] = await q<{ any: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'store_id' AND NOT attisdropped) AS any`,
      [`"${table}"`],
    );
    if (has.any) return;
    await q(`ALTER TABLE "${table}" ADD COLUMN store_id text`);
    await q(`UPDATE "${table}" t SET store_id = w.store_id FROM webhooks w WHERE w.id = t."${column}"`);
    await q(`ALTER TABLE "${table}" ALTER COLUMN store_id SET NOT NULL`);
    const [pkey] = await q<{ conname: string; columns: string[] }>(
      `SELECT c.conname, array_agg(a.attname::text) AS columns FROM pg_constraint c
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
       WHERE c.conrelid = $1::regclass AND c.contype = 'p' GROUP BY c.conname`,
      [`"${table}"`],
    );
    if (pkey && pkey.columns.length === 1 && pkey.columns[0] === column) {
      await q(`ALTER TABLE "${table}" DROP CONSTRAINT "${pkey.conname}"`);
      await q(`ALTER TABLE "${table}" ADD PRIMARY KEY ("${column}", store_id)`);
    }
  }

  /** Copies every row of `table` into `${table}_new`, column by column as the new table has them. */
  private async copy(q: Query, table: string, source: (column: string) => string, from: string): Promise<void> {
    const columns = (
      await q<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
        [`${table}_new`],
      )
    ).map((row) => row.name);
    await q(`INSERT INTO ${table}_new (${columns.map((c) => `"${c}"`).join(', ')}) SELECT ${columns.map(source).join(', ')} FROM ${from}`);
    const [before] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    const [after] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}_new`);
    if (before.n !== after.n) throw new Error(`${table}: copied ${after.n} of ${before.n} rows`);
  }

  /**
   * The UTC days holding rows of the log tables, found by walking each id index one day at a
   * time (one probe per day with data, however many rows).
   */
  private async occupiedDays(q: Query): Promise<Set<number>> {
    const days = new Set<number>();
    for (const { table, key, prefix } of LOG_TABLES) {
      let cursor = `${prefix}0`;
      for (;;) {
        const [row] = await q<{ id: string | null }>(`SELECT min(${key}) AS id FROM ${table} WHERE ${key} >= $1 AND ${key} < $2`, [
          cursor,
          `${prefix}8`,
        ]);
        if (!row.id) break;
        const ms = idTime(row.id);
        if (ms === null) {
          throw new Error(`${table}.${key} ${row.id} is not a time-ordered id; it has no day to be kept in`);
        }
        const day = Math.floor(ms / DAY_MS);
        days.add(day);
        cursor = prefix + timeDigits((day + 1) * DAY_MS);
      }
    }
    return days;
  }

  async down(): Promise<void> {
    throw new Error('PartitionedLog cannot be undone: restore the backup taken before upgrading');
  }
}
