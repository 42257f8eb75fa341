import { Pool, type PoolClient } from 'pg';
import { type TestDatabase } from '../../../test/support/database';
import { createMigratedTestDatabase } from '../../../test/support/migrated-database';
import { MIN_COMPACTED_BYTES, QueueCompaction, shouldCompact } from './queue-compaction';

describe('shouldCompact', () => {
  it('rebuilds an index far larger than its rows need, and never a small one', () => {
    expect(shouldCompact(64 * 1024 * 1024, 0)).toBe(true);
    expect(shouldCompact(64 * 1024 * 1024, 100_000)).toBe(true);
    expect(shouldCompact(64 * 1024 * 1024, 200_000)).toBe(false);
    expect(shouldCompact(MIN_COMPACTED_BYTES - 1, 0)).toBe(false);
  });
});

/** Rebuilding the queue's indexes after a backlog drained, against a real PostgreSQL. */
describe('QueueCompaction', () => {
  const QUEUED = 20_000;
  let db: TestDatabase;
  let pool: Pool;
  let client: PoolClient;
  // Small enough for the indexes of 20,000 rows; the default waits for a backlog of some 10,000.
  const compaction = new QueueCompaction(64 * 1024);

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    client = await pool.connect();
    await db.query(
      `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ('wh_a', 'st_default', 'a', 'https://x.test/', '{order.created}', 's')`,
    );
  });

  afterAll(async () => {
    client.release();
    await pool.end();
    await db.drop();
  });

  async function queue(): Promise<void> {
    await db.query(
      `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
       SELECT 'del_' || lpad(i::text, 26, '0'), 'st_default', 'evt_' || lpad(i::text, 26, '0'), 'wh_a', 'order.created', now()
       FROM generate_series(1, $1) AS i`,
      [QUEUED],
    );
  }

  async function indexes(): Promise<Record<string, number>> {
    const rows = await db.query<{ name: string; bytes: string }>(
      `SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = 'delivery_queue'::regclass AND i.indisvalid ORDER BY c.relname`,
    );
    return Object.fromEntries(rows.map((row) => [row.name, Number(row.bytes)]));
  }

  it('leaves the indexes of a queue that still holds its rows as they are', async () => {
    await queue();
    await db.query('VACUUM ANALYZE delivery_queue');
    expect(await compaction.run(client)).toEqual([]);
    await db.query('DELETE FROM delivery_queue');
  });

  it('rebuilds the indexes a drained backlog left large, keeping each under its name, and then leaves them be', async () => {
    await queue();
    await db.query('DELETE FROM delivery_queue');
    await db.query('VACUUM ANALYZE delivery_queue');
    const before = await indexes();
    const compacted = await compaction.run(client);

    const after = await indexes();
    expect(Object.keys(after)).toEqual(Object.keys(before));
    const large = Object.keys(before).filter((name) => before[name] >= 64 * 1024);
    expect(large).toEqual(expect.arrayContaining(['delivery_queue_pkey', 'delivery_queue_webhook_idx']));
    expect(compacted.map((index) => index.name).sort()).toEqual(large.sort());
    for (const index of compacted) {
      expect(index.bytesBefore).toBe(before[index.name]);
      expect(index.bytesAfter).toBe(after[index.name]);
      expect(index.bytesAfter).toBeLessThan(index.bytesBefore / 10);
    }
    expect(await compaction.run(client)).toEqual([]);

    // The rebuilt indexes serve the queue as before: its key still refuses a duplicate.
    await queue();
    await expect(db.query(`INSERT INTO delivery_queue SELECT * FROM delivery_queue LIMIT 1`)).rejects.toThrow(/duplicate key/);
    await db.query('DELETE FROM delivery_queue');
  });

  it('drops the invalid copy a rebuild stopped half-way left', async () => {
    await queue();
    // A unique index that cannot be built is left invalid, as a rebuild that stopped is.
    await expect(client.query('CREATE UNIQUE INDEX CONCURRENTLY delivery_queue_pkey_ccnew ON delivery_queue (event_type)')).rejects.toThrow(
      /could not create unique index/,
    );
    await db.query('DELETE FROM delivery_queue');
    await compaction.run(client);

    expect(await db.query(`SELECT relname FROM pg_class WHERE relname = 'delivery_queue_pkey_ccnew'`)).toEqual([]);
  });
});
