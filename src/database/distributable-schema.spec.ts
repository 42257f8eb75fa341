import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import { dataSourceOptions } from './data-source-options';
import { runMigrationsLocked } from './run-migrations';

/**
 * Tables every node would hold whole under a distributed PostgreSQL (Citus) with `store_id` as the
 * distribution column (docs/scaling.md): small, and looked up before a store is known.
 */
const REFERENCE_TABLES = [
  'stores', // the tenants themselves
  'api_keys', // found by key_hash before the store is known
  'portal_sessions', // found by a token's or a code's hash before the store is known
  'settings', // deployment-wide values
  'migrations', // TypeORM's record of applied migrations
];

/**
 * Every other table must be distributable on store_id: each primary key and unique index holds
 * it, so that PostgreSQL can enforce it on one shard.
 */
describe('the schema is distributable on store_id', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    const dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(dataSource);
    await dataSource.destroy();
  });

  afterAll(async () => {
    await db.drop();
  });

  it('has store_id in every primary key and unique index outside the reference tables', async () => {
    const offenders = await db.query<{ table: string; index: string }>(
      `SELECT t.relname AS table, i.relname AS index
       FROM pg_index x
       JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
       WHERE (x.indisunique OR x.indisprimary) AND t.relkind IN ('r', 'p') AND NOT t.relispartition
         AND t.relname <> ALL ($1)
         AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'store_id' AND a.attnum = ANY (x.indkey))
       ORDER BY 1, 2`,
      [REFERENCE_TABLES],
    );
    expect(offenders).toEqual([]);
  });

  it('gives store_id to every table outside the reference tables', async () => {
    const tables = await db.query<{ table: string }>(
      `SELECT t.relname AS table FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
       WHERE t.relkind IN ('r', 'p') AND NOT t.relispartition AND t.relname <> ALL ($1)
         AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'store_id' AND NOT a.attisdropped)
       ORDER BY 1`,
      [REFERENCE_TABLES],
    );
    expect(tables).toEqual([]);
  });
});
