import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { runMigrationsLocked } from '../../src/database/run-migrations';
import { createTestDatabase, type TestDatabase } from './database';

/** A test database with every migration run, for specs that need the tables but not TypeORM. */
export async function createMigratedTestDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  const dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
  try {
    await runMigrationsLocked(dataSource);
  } finally {
    await dataSource.destroy();
  }
  return db;
}
