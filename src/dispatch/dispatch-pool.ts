import { Logger, type Provider } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../config/app-config';
import { DISPATCH_CONNECTIONS } from '../database/connection-budget';

/** DI token of the dispatcher's own PostgreSQL pool. */
export const DISPATCH_POOL = Symbol('DISPATCH_POOL');

/**
 * Session settings of the dispatcher's connections (see below for synchronous_commit).
 *
 * Every statement on these connections reads a few rows through an index (the claim walks the due
 * index in due order up to its LIMIT; the others look rows up by id), so some plans are off:
 *
 * - `enable_bitmapscan = off`: when the statistics are older than a burst of new deliveries, the
 *   planner expects a few due rows where there are tens of thousands, and chose a bitmap scan of
 *   all of them plus a sort (on disk) for each claim of 500: 40-60 ms a claim in the benchmark's
 *   throughput scenario, seen with auto_explain. Without bitmap scans the claim reads the index in
 *   order and stops at 500.
 * - `enable_seqscan = off`: the claim, result and next-due statements are named (prepared), and a
 *   generic plan made while the table was small reads it sequentially; kept as the table grows, a
 *   result of one delivery cost 32 ms instead of 0.6 (measured at 100,000 rows). With sequential
 *   scans off the plan made on an empty table is the index plan.
 * - `enable_hashjoin = off`, `enable_mergejoin = off`: the log tables are partitioned by day
 *   (docs/operations.md#retention), and a claim that joined its chosen rows to deliveries by hash
 *   read every row of every partition through an index (5,000 rows for 500 claimed). A nested loop
 *   looks each row up by id in the one partition its id belongs to (pruned at run time).
 * - `jit = off`: with partitions the planner's cost of a claim passes `jit_above_cost`, and each
 *   execution then spent 110-220 ms compiling 484 functions to run for 5 ms (auto_explain in the
 *   throughput benchmark). Nothing on these connections runs long enough to repay it.
 * - `plan_cache_mode = force_generic_plan`: a custom plan of the claim or the result prunes the
 *   day partitions at plan time, so it always looks cheaper than the generic plan and PostgreSQL
 *   planned these statements at every execution: 14 % of its CPU in a drain (perf). The generic
 *   plan prunes at run time, and the settings above keep it an index plan however small the table
 *   was when it was made.
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
  inject: [AppConfig],
  useFactory: (config: AppConfig): Pool => {
    const logger = new Logger('DispatchPool');
    const pool = new Pool({
      connectionString: config.databaseUrl,
      max: DISPATCH_CONNECTIONS,
      application_name: 'hookline-dispatch',
      // PGOPTIONS still applies (as it does to the other connections), with these settings added.
      options: [process.env.PGOPTIONS, ...Object.entries(DISPATCH_SESSION_SETTINGS).map(([name, value]) => `-c ${name}=${value}`)]
        .filter(Boolean)
        .join(' '),
      connectionTimeoutMillis: 5_000,
    });
    // An idle connection that breaks (the database restarts) must not take the process down.
    pool.on('error', (error) => logger.warn(`idle dispatch connection lost: ${error.message}`));
    return pool;
  },
};
