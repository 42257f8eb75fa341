import { DataSource } from 'typeorm';
import { Client } from 'pg';
import { adminUrlOf, citusWorkers, createTestDatabase, type TestDatabase } from '../../test/support/database';
import { dataSourceOptions } from './data-source-options';
import { REFERENCE_TABLES } from './migrations/1796800000000-CitusDistribution';
import { runMigrationsLocked } from './run-migrations';

/** Run by `npm run test:citus`, which points DATABASE_URL at the coordinator named by CITUS_URL. */
const onCluster = process.env.CITUS_URL ? describe : describe.skip;

/**
 * The migrations on a real Citus cluster (a coordinator and two worker nodes), as the app's own
 * role: every store-owned table is distributed on store_id, co-located, the tables looked up
 * before a store is known are copied to every node, and the constraints hold on the shards.
 */
onCluster('the migrations on a Citus coordinator', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    const dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(dataSource);
    await dataSource.destroy();
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
  });

  const tables = () =>
    db.query<{ table: string; method: string | null; column: string | null; colocation: number | null; storeOwned: boolean }>(
      `SELECT t.relname AS table, p.partmethod::text AS method, p.colocationid AS colocation,
         CASE WHEN p.partmethod = 'h' THEN column_to_column_name(p.logicalrelid, p.partkey) END AS column,
         EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'store_id' AND NOT a.attisdropped) AS "storeOwned"
       FROM pg_class t LEFT JOIN pg_dist_partition p ON p.logicalrelid = t.oid
       WHERE t.relnamespace = 'public'::regnamespace AND t.relkind IN ('r', 'p') AND NOT t.relispartition AND t.relname <> 'migrations'
       ORDER BY 1`,
    );

  it('copies stores, api_keys, settings and portal_sessions to every node, and distributes every other table on store_id, co-located', async () => {
    const all = await tables();
    const reference = all.filter((t) => (REFERENCE_TABLES as readonly string[]).includes(t.table));
    const distributed = all.filter((t) => !(REFERENCE_TABLES as readonly string[]).includes(t.table));
    expect(reference.map((t) => [t.table, t.method])).toEqual(REFERENCE_TABLES.map((name) => [name, 'n']).sort());
    expect(distributed.map((t) => t.table)).toEqual(
      expect.arrayContaining([
        'webhooks',
        'events',
        'delivery_queue',
        'delivery_log',
        'delivery_attempts',
        'idempotency_keys',
        'endpoint_health',
        'endpoint_rate_windows',
      ]),
    );
    for (const table of distributed)
      expect({ table: table.table, method: table.method, column: table.column, storeOwned: table.storeOwned }).toEqual({
        table: table.table,
        method: 'h',
        column: 'store_id',
        storeOwned: true,
      });
    expect(new Set(distributed.map((t) => t.colocation)).size).toBe(1);
  });

  it('spreads the shards over both worker nodes and keeps a store’s rows of every table on one of them', async () => {
    const nodes = await db.query<{ port: number }>(
      `SELECT DISTINCT p.nodeport AS port FROM pg_dist_shard s JOIN pg_dist_placement pl ON pl.shardid = s.shardid
       JOIN pg_dist_node p ON p.groupid = pl.groupid WHERE s.logicalrelid = 'delivery_log'::regclass`,
    );
    expect(nodes).toHaveLength(2);
    const placements = await db.query<{ table: string; node: number }>(
      `SELECT t AS table, (SELECT n.nodeport FROM pg_dist_placement pl JOIN pg_dist_node n ON n.groupid = pl.groupid
         WHERE pl.shardid = get_shard_id_for_distribution_column(t, 'st_default')) AS node
       FROM unnest(ARRAY['webhooks', 'events', 'delivery_queue', 'delivery_log', 'delivery_attempts', 'idempotency_keys', 'endpoint_health', 'endpoint_rate_windows']) t`,
    );
    expect(new Set(placements.map((p) => p.node)).size).toBe(1);
  });

  it('keeps the foreign keys, the check constraints and the keys, enforced on the shards', async () => {
    const keys = await db.query<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND connamespace = 'public'::regnamespace ORDER BY 1`,
    );
    expect(keys.map((k) => k.name)).toEqual(
      expect.arrayContaining([
        'api_keys_store_id_fkey',
        'webhooks_store_id_fkey',
        'events_store_id_fkey',
        'deliveries_store_id_fkey',
        'deliveries_webhook_id_fkey',
        'delivery_queue_store_id_fkey',
        'delivery_queue_webhook_id_fkey',
        'endpoint_health_webhook_id_fkey',
        'endpoint_rate_windows_webhook_id_fkey',
        'idempotency_keys_store_id_fkey',
        'portal_sessions_store_id_fkey',
      ]),
    );
    await expect(
      db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ('wh_x', 'st_nowhere', 'n', 'https://e.test', '{}', 's')`,
      ),
    ).rejects.toThrow(/foreign key/);
    await db.query(
      `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ('wh_x', 'st_default', 'n', 'https://e.test', '{}', 's')`,
    );
    await expect(
      db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ('wh_x', 'st_default', 'n', 'https://e.test', '{}', 's')`,
      ),
    ).rejects.toThrow(/duplicate key/);
    await expect(
      db.query(
        `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
         SELECT 'del_' || substr(pg_get_expr(relpartbound, oid), 23, 10) || 'x', 'st_default', 'evt_x', 'wh_x', 't', 'lost', 0
         FROM pg_class WHERE relname = 'delivery_log_p' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')`,
      ),
    ).rejects.toThrow(/check constraint/);
    await expect(
      db.query(
        `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
         SELECT 'del_' || substr(pg_get_expr(relpartbound, oid), 23, 10) || 'x', 'st_default', 'evt_x', 'wh_none', 't', 'failed', 0
         FROM pg_class WHERE relname = 'delivery_log_p' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')`,
      ),
    ).rejects.toThrow(/foreign key/);
    await expect(
      db.query(
        `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type) VALUES ('del_x', 'st_default', 'evt_x', 'wh_none', 't')`,
      ),
    ).rejects.toThrow(/foreign key/);
  });

  it('distributes at start a database migrated on one server and then given the extension, as after a restore', async () => {
    const restored = await createTestDatabase();
    const admin = new Client({ connectionString: adminUrlOf(restored) });
    await admin.connect();
    try {
      await admin.query('DROP EXTENSION citus');
      const plain = await new DataSource(dataSourceOptions(restored.url, 2)).initialize();
      await runMigrationsLocked(plain);
      await plain.destroy();
      expect(await restored.query(`SELECT to_regclass('pg_dist_partition') AS catalog`)).toEqual([{ catalog: null }]);

      await admin.query('CREATE EXTENSION citus');
      const self = new URL(process.env.DATABASE_URL!);
      await admin.query('SELECT citus_set_coordinator_host($1, $2)', [self.hostname, Number(self.port || 5432)]);
      for (const worker of await citusWorkers()) {
        const { hostname, port } = new URL(worker);
        await admin.query('SELECT citus_add_node($1, $2)', [hostname, Number(port || 5432)]);
      }
      const cluster = await new DataSource(dataSourceOptions(restored.url, 2)).initialize();
      await runMigrationsLocked(cluster);
      await cluster.destroy();
      const kinds = await restored.query<{ table: string; method: string }>(
        `SELECT logicalrelid::text AS table, partmethod::text AS method FROM pg_dist_partition
         WHERE logicalrelid IN ('stores'::regclass, 'delivery_log'::regclass, 'delivery_queue'::regclass) ORDER BY 1`,
      );
      expect(kinds).toEqual([
        { table: 'delivery_log', method: 'h' },
        { table: 'delivery_queue', method: 'h' },
        { table: 'stores', method: 'n' },
      ]);
      expect(await restored.query(`SELECT id FROM stores`)).toEqual([{ id: 'st_default' }]);
      // The plain server's trigger in place of the log's keys is undone: Citus keeps the keys.
      expect(await restored.query(`SELECT tgname FROM pg_trigger WHERE tgrelid = 'webhooks'::regclass AND NOT tgisinternal`)).toEqual([]);
      expect(
        await restored.query(
          `SELECT conname AS name FROM pg_constraint WHERE contype = 'f' AND conparentid = 0
           AND conrelid IN ('delivery_log'::regclass, 'delivery_queue'::regclass) ORDER BY 1`,
        ),
      ).toEqual([
        { name: 'deliveries_store_id_fkey' },
        { name: 'deliveries_webhook_id_fkey' },
        { name: 'delivery_queue_store_id_fkey' },
        { name: 'delivery_queue_webhook_id_fkey' },
      ]);
    } finally {
      await admin.end();
      await restored.drop();
    }
  }, 180_000);

  it('distributes a day partition attached later, as retention makes them', async () => {
    await db.query(`CREATE TABLE delivery_log_p29991231 (LIKE delivery_log INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await db.query(`ALTER TABLE delivery_log ATTACH PARTITION delivery_log_p29991231 FOR VALUES FROM ('del_7') TO ('del_8')`);
    const [partition] = await db.query<{ method: string; colocated: boolean }>(
      `SELECT p.partmethod::text AS method,
         p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'delivery_log'::regclass) AS colocated
       FROM pg_dist_partition p WHERE p.logicalrelid = 'delivery_log_p29991231'::regclass`,
    );
    expect(partition).toEqual({ method: 'h', colocated: true });
    await db.query(`ALTER TABLE delivery_log DETACH PARTITION delivery_log_p29991231`);
    await db.query(`DROP TABLE delivery_log_p29991231`);
  });
});
