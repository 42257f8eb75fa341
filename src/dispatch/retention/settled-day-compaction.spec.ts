import { Pool, type PoolClient } from 'pg';
import { type TestDatabase } from '../../../test/support/database';
import { createMigratedTestDatabase } from '../../../test/support/migrated-database';
import { PartitionMaintenance } from './partition-maintenance';
import { DAY_MS, dayBounds, dayOf } from './partition-plan';
import { SettledDayCompaction } from './settled-day-compaction';

/** Packing a settled day's log indexes, against a real PostgreSQL. */
describe('SettledDayCompaction', () => {
  const ROWS = 20_000;
  // Midday, so that the day before yesterday has settled and yesterday has not.
  const today = dayOf(Date.now());
  const now = today * DAY_MS + DAY_MS / 2;
  let db: TestDatabase;
  let pool: Pool;
  let client: PoolClient;
  const compaction = new SettledDayCompaction();

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    client = await pool.connect();
    await db.query(
      `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted)
       SELECT 'wh_' || w, 'st_default', w, 'https://x.test/', '{order.created}', 's' FROM unnest(ARRAY['a', 'b', 'c']) AS w`,
    );
    await new PartitionMaintenance(pool).ensureDays([today - 3, today - 2, today - 1]);
    for (const day of [today - 3, today - 2, today - 1]) await fill(day);
  });

  afterAll(async () => {
    client.release();
    await pool.end();
    await db.drop();
  });

  /** A day's events, ended deliveries and attempts, written out of id order as deliveries end. */
  async function fill(day: number): Promise<void> {
    const events = dayBounds('evt_', day).from;
    const deliveries = dayBounds('del_', day).from;
    await db.query(
      `INSERT INTO events (id, store_id, type, body) SELECT $1 || md5(i::text), 'st_default', 'order.created', '{}' FROM generate_series(1, $2) AS i`,
      [events, ROWS / 10],
    );
    await db.query(
      `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
       SELECT $1 || md5(i::text), 'st_default', $2 || md5((i / 10)::text), 'wh_' || (ARRAY['a', 'b', 'c'])[i % 3 + 1], 'order.created', 'succeeded', 1
       FROM generate_series(1, $3) AS i`,
      [deliveries, events, ROWS],
    );
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, store_id, number, started_at, duration_ms, status_code)
       SELECT $1 || md5(i::text), 'st_default', 1, now(), 5, 200 FROM generate_series(1, $2) AS i`,
      [deliveries, ROWS],
    );
  }

  /** The partition each index named belongs to. */
  async function tablesOf(names: string[]): Promise<string[]> {
    const rows = await db.query<{ table: string }>(
      `SELECT DISTINCT x.indrelid::regclass::text AS table FROM pg_index x WHERE x.indexrelid::regclass::text = ANY($1) ORDER BY 1`,
      [names],
    );
    return rows.map((row) => row.table);
  }

  const partitionsOf = (stamp: string) => [`delivery_attempts_p${stamp}`, `delivery_log_p${stamp}`, `events_p${stamp}`];
  const stampOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '');

  it("packs the latest settled day's indexes, a quarter smaller, then the day before, and never a day not settled", async () => {
    const first = await compaction.run(client, now);
    expect(await tablesOf(first.map((index) => index.name))).toEqual(partitionsOf(stampOf(today - 2)));
    expect(first).toHaveLength(5);
    for (const index of first) {
      expect(index.reason).toBe('packed once its day settled');
      expect(index.bytesAfter).toBeLessThan(index.bytesBefore * 0.8);
    }

    const second = await compaction.run(client, now);
    expect(await tablesOf(second.map((index) => index.name))).toEqual(partitionsOf(stampOf(today - 3)));
    expect(await compaction.run(client, now)).toEqual([]);

    // Yesterday settles tomorrow.
    const third = await compaction.run(client, now + DAY_MS);
    expect(await tablesOf(third.map((index) => index.name))).toEqual(partitionsOf(stampOf(today - 1)));
  });

  it('leaves a packed index serving its table: the key still refuses a duplicate, and rows still come in', async () => {
    const deliveries = dayBounds('del_', today - 2).from;
    await expect(db.query(`INSERT INTO delivery_log SELECT * FROM delivery_log WHERE id = $1 || md5('1')`, [deliveries])).rejects.toThrow(
      /duplicate key/,
    );
    await db.query(
      `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
       VALUES ($1 || 'late', 'st_default', 'evt_x', 'wh_a', 'order.created', 'failed', 5)`,
      [deliveries],
    );
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM delivery_log WHERE webhook_id = 'wh_a' AND id >= $1`, [
      deliveries,
    ]);
    expect(row.n).toBeGreaterThan(ROWS / 3);
  });

  it('drops the invalid copy a rebuild stopped half-way left', async () => {
    const partition = `delivery_log_p${stampOf(today - 2)}`;
    // A unique index that cannot be built is left invalid, as a rebuild that stopped is.
    await expect(client.query(`CREATE UNIQUE INDEX CONCURRENTLY delivery_log_pkey_ccnew ON ${partition} (store_id)`)).rejects.toThrow(
      /could not create unique index/,
    );
    expect(await compaction.run(client, now + DAY_MS)).toEqual([]);

    expect(await db.query(`SELECT relname FROM pg_class WHERE relname = 'delivery_log_pkey_ccnew'`)).toEqual([]);
  });
});
