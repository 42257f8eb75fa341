import { Logger, type Provider } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../config/app-config';

/** DI token of the dispatcher's own PostgreSQL pool. */
export const DISPATCH_POOL = Symbol('DISPATCH_POOL');

/**
 * The connections on which the dispatcher claims deliveries and records attempts, with
 * `synchronous_commit = off`: those commits return without waiting for the WAL flush (PostgreSQL
 * writes it within a fraction of a second). Publishing keeps synchronous commits, so an accepted
 * event is never lost; if PostgreSQL itself crashed, at most the last moments of delivery
 * bookkeeping would roll back, and those deliveries would be sent again, which at-least-once
 * allows. Measured in the benchmark's latency scenario (bench/README.md).
 */
export const dispatchPoolProvider: Provider = {
  provide: DISPATCH_POOL,
  inject: [AppConfig],
  useFactory: (config: AppConfig): Pool => {
    const logger = new Logger('DispatchPool');
    const pool = new Pool({
      connectionString: config.databaseUrl,
      max: 4,
      application_name: 'hookline-dispatch',
      // PGOPTIONS still applies (as it does to the other connections), with this setting added.
      options: [process.env.PGOPTIONS, '-c synchronous_commit=off'].filter(Boolean).join(' '),
      connectionTimeoutMillis: 5_000,
    });
    // An idle connection that breaks (the database restarts) must not take the process down.
    pool.on('error', (error) => logger.warn(`idle dispatch connection lost: ${error.message}`));
    return pool;
  },
};
