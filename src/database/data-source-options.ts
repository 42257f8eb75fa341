import { DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { InitialSchema1795377000000 } from './migrations/1795377000000-InitialSchema';

/** Every migration, in order. Listed explicitly so that ts-jest, ts-node and dist/ all agree. */
export const MIGRATIONS = [InitialSchema1795377000000];

export function dataSourceOptions(url: string, poolSize = 10): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsRun: false,
    synchronize: false,
    logging: false,
    poolSize,
    extra: {
      application_name: 'hookline',
      // Fail fast instead of queueing forever when PostgreSQL is unreachable.
      connectionTimeoutMillis: 5_000,
    },
  };
}
