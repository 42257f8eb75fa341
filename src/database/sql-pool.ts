import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../config/app-config';
import { connectionBudget } from './connection-budget';

/**
 * A pg pool of its own for the hand-written hot statements (publishing, the pages of endpoints):
 * one call each, named (prepared) statements, no TypeORM query runner to acquire and release
 * around them. TypeORM keeps its pool for repositories and transactions.
 */
@Injectable()
export class SqlPool extends Pool implements OnApplicationShutdown {
  private readonly logger = new Logger(SqlPool.name);

  constructor(config: AppConfig) {
    super({
      connectionString: config.databaseUrl,
      max: connectionBudget(config.dbPoolSize).sql,
      application_name: 'hookline',
      // Fail fast instead of queueing forever when PostgreSQL is unreachable.
      connectionTimeoutMillis: 5_000,
    });
    // An idle connection that breaks (the database restarts) must not take the process down.
    this.on('error', (error) => this.logger.warn(`idle connection lost: ${error.message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.end().catch(() => undefined);
  }
}
