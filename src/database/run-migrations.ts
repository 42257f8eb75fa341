import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { distributeOnCitus } from './migrations/1796800000000-CitusDistribution';

/** Any fixed 64-bit number; every Hookline process uses the same one. */
const MIGRATION_LOCK_KEY = 7_338_249_011;

/**
 * Applies pending migrations while holding a session advisory lock, so that several instances
 * starting together run them once: the others wait, then find nothing left to do.
 */
export async function runMigrationsLocked(dataSource: DataSource, logger = new Logger('Migrations')): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      if (applied.length > 0) logger.log(`applied ${applied.map((m) => m.name).join(', ')}`);
      // A database migrated on one server, then restored on a Citus coordinator (docs/scaling.md).
      if (await dataSource.transaction((manager) => distributeOnCitus((sql, params) => manager.query(sql, params)))) {
        logger.log('distributed the tables over the Citus cluster');
      }
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}
