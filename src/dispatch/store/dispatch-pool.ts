import { Logger, type Provider } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../../config/app-config';
import { DISPATCH_CONNECTIONS } from '../../database/connection-budget';
import { DatabaseEngine } from '../../database/database-engine';

/** DI token of the dispatcher's own PostgreSQL pool. */
export const DISPATCH_POOL = Symbol('DISPATCH_POOL');

/**
 * Session settings of the dispatcher's connections (see below for synchronous_commit). Every
 * statement on them reads a few rows through an index, so the plans that would not are off
 * (docs/scaling.md, "Plans that do not go stale", has the figures):
 *
 * - `enable_bitmapscan`, `enable_seqscan`: the claim reads the due index in order and stops at its
 *   LIMIT even when the statistics lag behind a burst, and a generic plan made while the table
 *   was small stays an index plan as it grows.
 * - `enable_hashjoin`, `enable_mergejoin`: each row a statement touches is looked up by id in the
 *   one day partition it belongs to (pruned at run time), not joined across every partition.
 * - `jit`: over the partitions a claim's estimated cost passes `jit_above_cost`, and nothing on
 *   these connections runs long enough to repay compiling it.
 * - `plan_cache_mode`: a custom plan prunes partitions at plan time, so it always looks cheaper and
 *   PostgreSQL would plan these statements at every execution; the generic plan prunes at run time.
 */
export const DISPATCH_SESSION_SETTINGS = {
  jit: 'off',
  plan_cache_mode: 'force_generic_plan',
  synchronous_commit: 'off',
  enable_bitmapscan: 'off',
  enable_seqscan: 'off',
  enable_hashjoin: 'off',
  enable_mergejoin: 'off',
} as const;

/**
 * The connections on which the dispatcher claims deliveries and records attempts, with
 * `synchronous_commit = off`: those commits return without waiting for the WAL flush (PostgreSQL
 * writes it within a fraction of a second). Publishing keeps synchronous commits, so an accepted
 * event is never lost; if PostgreSQL itself crashed, at most the last moments of delivery
 * bookkeeping would roll back, and those deliveries would be sent again, which at-least-once
 * allows. The benchmark's latency scenario measures the difference.
 */
export const dispatchPoolProvider: Provider = {
  provide: DISPATCH_POOL,
  inject: [AppConfig, DatabaseEngine],
  useFactory: (config: AppConfig, engine: DatabaseEngine): Pool => {
    const logger = new Logger('DispatchPool');
    // Citus plans a distributed statement anew for its parameters' values (which shard); forced
    // generic plans leave it none to make ("could not create distributed plan").
    const settings = Object.entries(DISPATCH_SESSION_SETTINGS).filter(([name]) => !engine.citus || name !== 'plan_cache_mode');
    const pool = new Pool({
      connectionString: config.databaseUrl,
      max: DISPATCH_CONNECTIONS,
      application_name: 'hookline-dispatch',
      // PGOPTIONS still applies (as it does to the other connections), with these settings added.
      options: [process.env.PGOPTIONS, ...settings.map(([name, value]) => `-c ${name}=${value}`)].filter(Boolean).join(' '),
      connectionTimeoutMillis: 5_000,
    });
    // An idle connection that breaks (the database restarts) must not take the process down.
    pool.on('error', (error) => logger.warn(`idle dispatch connection lost: ${error.message}`));
    return pool;
  },
};
