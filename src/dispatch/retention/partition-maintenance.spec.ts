import { Pool } from 'pg';
import { type TestDatabase } from '../../../test/support/database';
import { createMigratedTestDatabase } from '../../../test/support/migrated-database';
import { newId, newIdAtTimeOf } from '../../common/ids';
import { PartitionMaintenance } from './partition-maintenance';
import { DAY_MS, dayOf, partitionName } from './partition-plan';

/** Creating and dropping daily partitions against a real PostgreSQL. */
describe('PartitionMaintenance', () => {
  let db: TestDatabase;
  let pool: Pool;
  let maintenance: PartitionMaintenance;
  const now = Date.now();
  const today = dayOf(now);

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    maintenance = new PartitionMaintenance(pool);
    await db.query(
      `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ('wh_a', 'st_default', 'a', 'https://x.test/', '{order.created}', 's')`,
    );
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function partitions(day: number): Promise<string[]> {
    const names = ['events', 'delivery_log', 'delivery_attempts'].map((table) => partitionName(table as 'events', day));
    const rows = await db.query<{ relname: string }>(`SELECT relname FROM pg_class WHERE relname = ANY ($1) ORDER BY relname`, [names]);
    return rows.map((row) => row.relname);
  }

  /** An event of `day` with one delivery of `status` and one attempt. */
  async function eventOn(day: number, status: 'pending' | 'succeeded'): Promise<string> {
    const event = newId('evt', day * DAY_MS + 3_600_000);
    const delivery = newIdAtTimeOf('del', event);
    await db.query(`INSERT INTO events (id, store_id, type, body) VALUES ($1, 'st_default', 'order.created', '{}')`, [event]);
    await db.query(
      status === 'pending'
        ? `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
           VALUES ($1, 'st_default', $2, 'wh_a', 'order.created', now() + interval '1 hour')`
        : `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
           VALUES ($1, 'st_default', $2, 'wh_a', 'order.created', 'succeeded', 1)`,
      [delivery, event],
    );
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, store_id, number, started_at, duration_ms, status_code) VALUES ($1, 'st_default', 1, now(), 5, 500)`,
      [delivery],
    );
    return event;
  }

  it("creates the days from its clock's today to two days ahead, in every log table", async () => {
    const report = await maintenance.run(now + 10 * DAY_MS, 0);
    expect(report.ran).toBe(true);
    const days = report.created.filter((c) => c.table === 'events').map((c) => c.day);
    expect(days).toEqual(Array.from({ length: 3 }, (_, i) => today + 10 + i));
    expect(await partitions(today + 12)).toHaveLength(3);
    expect(await partitions(today + 13)).toEqual([]);
    expect((await maintenance.run(now + 10 * DAY_MS, 0)).created).toEqual([]);
  });

  it('drops a day past retention whole, and keeps one whose delivery is still queued', async () => {
    await maintenance.ensureDays([today - 40, today - 35, today - 3]);
    await eventOn(today - 40, 'succeeded');
    await eventOn(today - 40, 'succeeded');
    const kept = await eventOn(today - 35, 'pending');
    await eventOn(today - 35, 'succeeded');
    const recent = await eventOn(today - 3, 'succeeded');

    const report = await maintenance.run(now, 30);

    expect(report.keptPending).toEqual([today - 35]);
    expect(report.dropped).toEqual([
      { table: 'delivery_attempts', day: today - 40, rows: 2 },
      { table: 'delivery_log', day: today - 40, rows: 2 },
      { table: 'events', day: today - 40, rows: 2 },
    ]);
    expect(await partitions(today - 40)).toEqual([]);
    expect(await partitions(today - 35)).toHaveLength(3);
    const events = await db.query<{ id: string }>(`SELECT id FROM events WHERE id = ANY ($1) ORDER BY id`, [[kept, recent]]);
    expect(events.map((e) => e.id)).toEqual([kept, recent]);

    // Once that delivery has ended, its day goes too.
    await db.query(
      `WITH ended AS (DELETE FROM delivery_queue WHERE event_id = $1 RETURNING *)
       INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
       SELECT id, store_id, event_id, webhook_id, event_type, 'succeeded', 1 FROM ended`,
      [kept],
    );
    const next = await maintenance.run(now, 30);
    expect(next.dropped.map((d) => [d.table, d.day, d.rows])).toEqual([
      ['delivery_attempts', today - 35, 2],
      ['delivery_log', today - 35, 2],
      ['events', today - 35, 2],
    ]);
  });

  it('finishes a drop that stopped after detaching', async () => {
    await maintenance.ensureDays([today - 50]);
    await eventOn(today - 50, 'succeeded');
    await db.query(`ALTER TABLE delivery_log DETACH PARTITION ${partitionName('delivery_log', today - 50)}`);
    const report = await maintenance.run(now, 30);
    expect(report.dropped.map((d) => d.table)).toEqual(['delivery_attempts', 'delivery_log', 'events']);
    expect(await partitions(today - 50)).toEqual([]);
  });

  it("drops by the database's clock, whatever the caller's", async () => {
    await maintenance.ensureDays([today - 45]);
    await eventOn(today - 45, 'succeeded');
    // On a caller's clock 20 days behind, that day would be 25 days old: within retention.
    const report = await maintenance.run(now - 20 * DAY_MS, 30);
    expect(report.dropped.map((d) => [d.table, d.day])).toEqual([
      ['delivery_attempts', today - 45],
      ['delivery_log', today - 45],
      ['events', today - 45],
    ]);
  });

  it('leaves the run to the instance holding the lock', async () => {
    const holder = await pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(7338249012)');
      expect(await maintenance.run(now, 30)).toEqual({ ran: false, created: [], dropped: [], keptPending: [], compacted: [] });
    } finally {
      await holder.query('SELECT pg_advisory_unlock(7338249012)');
      holder.release();
    }
  });
});
