import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { runMigrationsLocked } from '../../src/database/run-migrations';
import { AttemptOutcome, DeliveryRepository } from '../../src/dispatch/store/delivery.repository';
import { DISPATCH_SESSION_SETTINGS } from '../../src/dispatch/store/dispatch-pool';
import { dayOf } from '../../src/dispatch/retention/partition-plan';
import { BenchDatabase, bulkPublish, createDatabase } from './db';
import { fillDays } from './fill-days';
import { median, percentile, round } from './stats';

/** One store's claims with nothing in flight: every endpoint and the store have all their slots. */
const NO_LIMITS = { excluded: [], partial: new Map(), perEndpoint: 64, excludedStores: [], partialStores: new Map(), perStore: 500 };

export interface ClaimSizes {
  /** Due pending deliveries the claim picks its batch from. */
  pending: number;
  /** Finished (succeeded/failed) deliveries added for the second measurement. */
  finished: number;
  /** Timed repetitions per measurement (after 5 unmeasured ones). */
  runs: number;
  batch: number;
}

export interface ClaimTiming {
  rowsInTable: number;
  claimMedianMs: number;
  claimP90Ms: number;
  recordMedianMs: number;
  nextDueMedianMs: number;
  claimed: number;
  plan: string;
  /** recordOutcomes of the claimed batch, all succeeded. */
  recordPlan: string;
}

export interface ClaimResult {
  emptyTableClaimMs: number;
  at0: ClaimTiming;
  atLarge: ClaimTiming;
  finishedRowsInsertMs: number;
}

const STORE = 'st_default';
const ENDPOINTS = 10;

/**
 * Times the dispatcher's own statements (DeliveryRepository.claimDue, recordOutcomes, nextDueAt:
 * the SQL text of src/, run through the repository itself) against a database holding `pending`
 * due deliveries and, first, no other rows, then `finished` finished ones as well (inserted with
 * generate_series, then VACUUM ANALYZE as autovacuum would). Each run is a transaction rolled
 * back, so every run claims from the same state.
 */
export async function measureClaim(
  serverUrl: string,
  sizes: ClaimSizes,
  log: (line: string) => void,
  track: (db: BenchDatabase) => void,
): Promise<ClaimResult> {
  const db = await createDatabase(serverUrl, '_claim');
  track(db);
  const dataSource = new DataSource(dataSourceOptions(db.url, 2));
  try {
    await dataSource.initialize();
    await runMigrationsLocked(dataSource, { log: () => undefined } as never);
    const webhookIds = Array.from({ length: ENDPOINTS }, (_, i) => `wh_bench${String(i).padStart(22, '0')}`);
    await db.pool.query(
      `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted)
       SELECT id, $1, 'bench', 'http://127.0.0.1:9/ok', ARRAY['order.created'], 'v1.x.y.z' FROM unnest($2::text[]) AS id`,
      [STORE, webhookIds],
    );
    const emptyTableClaimMs = (await timeStatements(db, sizes, 0)).claimMedianMs;
    await bulkPublish(db.pool, {
      storeId: STORE,
      type: 'order.created',
      webhookIds,
      events: Math.ceil(sizes.pending / ENDPOINTS),
      batchEvents: 2000,
      notify: false,
    });
    await db.pool.query('VACUUM ANALYZE delivery_queue');
    await db.pool.query('VACUUM ANALYZE delivery_log');
    await db.pool.query('VACUUM ANALYZE events');
    const at0 = await timeStatements(db, sizes, sizes.batch);
    log(`claim at ${at0.rowsInTable} rows: ${at0.claimMedianMs} ms; inserting ${sizes.finished} finished deliveries`);
    const finishedRowsInsertMs = await insertFinished(db, webhookIds, sizes.finished, log);
    await db.pool.query('VACUUM ANALYZE delivery_queue');
    await db.pool.query('VACUUM ANALYZE delivery_log');
    await db.pool.query('VACUUM ANALYZE events');
    const atLarge = await timeStatements(db, sizes, sizes.batch);
    return { emptyTableClaimMs, at0, atLarge, finishedRowsInsertMs };
  } finally {
    await dataSource.destroy().catch(() => undefined);
    await db.drop();
  }
}

/** A DeliveryRepository whose pg pool is one client inside the caller's transaction. */
function repositoryOn(client: PoolClient, capture: { sql?: string; params?: unknown[] }): DeliveryRepository {
  const pool = {
    // The repository sends named (prepared) statements as config objects, others as text + values.
    query: (sql: string | { text: string; values?: unknown[] }, params?: unknown[]) => {
      const text = typeof sql === 'string' ? sql : sql.text;
      const values = typeof sql === 'string' ? params : sql.values;
      capture.sql = text;
      capture.params = values;
      return typeof sql === 'string' ? client.query(text, values) : client.query(sql);
    },
  };
  return new DeliveryRepository(pool as unknown as Pool);
}

async function timeStatements(db: BenchDatabase, sizes: ClaimSizes, expected: number): Promise<ClaimTiming> {
  const client = await db.pool.connect();
  const claimMs: number[] = [];
  const recordMs: number[] = [];
  const nextDueMs: number[] = [];
  const capture: { sql?: string; params?: unknown[] } = {};
  let claimed = 0;
  try {
    // The dispatcher's connections run with these settings (src/dispatch/store/dispatch-pool.ts).
    for (const [name, value] of Object.entries(DISPATCH_SESSION_SETTINGS))
      await client.query(`SELECT set_config($1, $2, false)`, [name, value]);
    const repo = repositoryOn(client, capture);
    for (let run = 0; run < sizes.runs + 5; run++) {
      await client.query('BEGIN');
      try {
        const token = randomUUID();
        let started = performance.now();
        const rows = (await repo.claimDue(sizes.batch, 32_000, token, NO_LIMITS)).deliveries;
        const claimTook = performance.now() - started;
        claimed = rows.length;
        const outcomes = succeededOutcomes(rows, token);
        started = performance.now();
        await repo.recordOutcomes(outcomes);
        const recordTook = performance.now() - started;
        started = performance.now();
        await repo.nextDueAt();
        const nextDueTook = performance.now() - started;
        if (run >= 5) {
          claimMs.push(claimTook);
          recordMs.push(recordTook);
          nextDueMs.push(nextDueTook);
        }
      } finally {
        await client.query('ROLLBACK');
      }
    }
    if (claimed !== expected) throw new Error(`the claim returned ${claimed} rows, expected ${expected}`);
    // The plans of the claim and of recording its outcomes, as PostgreSQL ran them, kept in results.json.
    await client.query('BEGIN');
    let plan = '';
    let recordPlan = '';
    const explain = async (): Promise<string> => {
      const explained = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${capture.sql}`, capture.params);
      return explained.rows.map((row) => row['QUERY PLAN']).join('\n');
    };
    try {
      const token = randomUUID();
      const rows = (await repo.claimDue(sizes.batch, 32_000, token, NO_LIMITS)).deliveries;
      await client.query('SAVEPOINT claimed');
      await repo.recordOutcomes(succeededOutcomes(rows, token));
      await client.query('ROLLBACK TO SAVEPOINT claimed');
      recordPlan = await explain();
      await repo.claimDue(sizes.batch, 32_000, randomUUID(), NO_LIMITS);
      plan = await explain();
    } finally {
      await client.query('ROLLBACK');
    }
    const rowsInTable = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM deliveries')).rows[0].n);
    return {
      rowsInTable,
      claimMedianMs: round(median(claimMs), 2),
      claimP90Ms: round(percentile(claimMs, 90), 2),
      recordMedianMs: round(median(recordMs), 2),
      nextDueMedianMs: round(median(nextDueMs), 2),
      claimed,
      plan,
      recordPlan,
    };
  } finally {
    client.release();
  }
}

/** Every claimed delivery answered 200 at its first try. */
function succeededOutcomes(rows: Array<{ id: string; attemptNumber: number; ordered: boolean }>, token: string): AttemptOutcome[] {
  return rows.map((row) => ({
    deliveryId: row.id,
    leaseToken: token,
    ordered: row.ordered,
    attempt: {
      number: row.attemptNumber,
      trigger: 'scheduled',
      startedAt: new Date(),
      durationMs: 3,
      statusCode: 200,
      error: null,
      responseBody: '{"received":true}',
    },
    status: 'succeeded',
    retryDelayMs: 0,
    decidedAt: Date.now(),
    lastStatusCode: 200,
    lastError: null,
  }));
}

/**
 * `count` finished deliveries (95 % succeeded, 5 % failed), ten per event, over the past 30 days,
 * each day in its own partitions as the service would have written them.
 */
async function insertFinished(db: BenchDatabase, webhookIds: string[], count: number, log: (line: string) => void): Promise<number> {
  const today = dayOf(Date.now());
  const days = Array.from({ length: 30 }, (_, i) => today - 30 + i);
  return fillDays(db.pool, { storeId: STORE, type: 'order.created', webhookIds, deliveries: count, days, attempts: false }, log);
}
