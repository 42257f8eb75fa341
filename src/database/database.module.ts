import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { connectionBudget } from './connection-budget';
import { dataSourceOptions } from './data-source-options';
import { DatabaseEngine } from './database-engine';
import { PgNotifier } from './pg-notifier';
import { runMigrationsLocked } from './run-migrations';
import { SettingsRepository } from './settings.repository';
import { SqlPool } from './sql-pool';
import { warnIfSuperuser } from './superuser-warning';

/**
 * TypeORM on PostgreSQL, one code path: the URL is a real server's (DATABASE_URL) or the embedded
 * server's that main.ts started. Migrations run before anything else can use the connection.
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        if (!config.databaseUrl) throw new Error('no database URL: main.ts starts the embedded PostgreSQL first');
        return { ...dataSourceOptions(config.databaseUrl, connectionBudget(config.dbPoolSize).orm), autoLoadEntities: true };
      },
      dataSourceFactory: async (options) => {
        const dataSource = await new DataSource(options!).initialize();
        await runMigrationsLocked(dataSource);
        await warnIfSuperuser((sql) => dataSource.query(sql));
        return dataSource;
      },
    }),
  ],
  providers: [
    PgNotifier,
    SettingsRepository,
    SqlPool,
    // After the migrations (the data source runs them before it is provided).
    {
      provide: DatabaseEngine,
      inject: [DataSource],
      useFactory: (dataSource: DataSource) => DatabaseEngine.detect((sql) => dataSource.query(sql)),
    },
  ],
  exports: [PgNotifier, SettingsRepository, SqlPool, DatabaseEngine],
})
export class DatabaseModule {}
