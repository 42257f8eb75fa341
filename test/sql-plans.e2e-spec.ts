import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Pool, type PoolClient, type QueryConfig } from 'pg';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };
import { DataSource } from 'typeorm';
import { timeDigits } from '../src/common/ids';
import { dataSourceOptions } from '../src/database/data-source-options';
import { runMigrationsLocked } from '../src/database/run-migrations';
import { DISPATCH_SESSION_SETTINGS } from '../src/dispatch/store/dispatch-pool';
import { DeliveryRepository, type AttemptOutcome } from '../src/dispatch/store/delivery.repository';
import { createTestDatabase, type TestDatabase } from './support/database';

/**
 * The plans of the two statements every delivery runs, the claim and the outcome, at a seeded
 * size, on the dispatcher's session settings, against checked-in snapshots (one per PostgreSQL
 * major version): a plan that changes shows in review. `npm run sql:snapshots` rewrites them.
 */
const UPDATE = process.env.UPDATE_SQL_SNAPSHOTS === '1';
const PLANS = join(__dirname, '..', 'src', 'dispatch', 'store', 'plans');
const STORES = 20;
const ENDPOINTS_PER_STORE = 5;
const EVENTS_PER_STORE = 100;

const TODAY = timeDigits(Date.now());
const NO_LIMITS = { excluded: [], partial: new Map(), perEndpoint: 100, excludedStores: [], partialStores: new Map(), perStore: 100 };

function literal(client: PoolClient, value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  return client.escapeLiteral(String(prepareValue(value)));
}

/**
 * The plan without what changes from day to day: each day partition is named by its date and
 * numbered by its place, so days read `<day>`, aliases and plan numbers lose their counters, and
 * the runs of identical day partitions fold into one.
 */
export function stablePlan(lines: string[]): string {
  const normal = lines.map((line) =>
    line
      .replace(/_p\d{8}/g, '_p<day>')
      .replace(/\b([a-z]+)_\d+\b/g, '$1_n')
      .replace(/\$\d+/g, (param) => (Number(param.slice(1)) > 12 ? '$n' : param))
      .replace(/\b(InitPlan|SubPlan) \d+/g, '$1 n'),
  );
  for (let size = 1; size <= 3; size++) {
    for (let i = 0; i + 2 * size <= normal.length;) {
      const same = normal.slice(i, i + size).every((line, k) => line === normal[i + size + k]);
      if (same && normal[i].includes('<day>')) normal.splice(i + size, size);
      else i++;
    }
  }
  return normal.join('\n');
}

/** A stand-in for the dispatch pool that keeps what the repository would send, and sends nothing. */
class RecordingPool {
  readonly sent: QueryConfig[] = [];
  query(config: QueryConfig): Promise<{ rows: never[]; rowCount: number }> {
    this.sent.push(config);
    return Promise.resolve({ rows: [], rowCount: 0 });
  }
}

describe('plans of the claim and the outcome', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let pool: Pool;
  let major: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(dataSource);
    const options = Object.entries(DISPATCH_SESSION_SETTINGS).map(([name, value]) => `-c ${name}=${value}`);
    pool = new Pool({ connectionString: db.url, max: 1, options: options.join(' ') });
    // 20 stores of 5 endpoints, 100 events each fanned out to all five: 10,000 deliveries, a
    // tenth of them due, the rest delivered, with an attempt each.
    await db.query(`INSERT INTO stores (id, name) SELECT 'st_' || s, 'store ' || s FROM generate_series(1, $1::int) s`, [STORES]);
    await db.query(
      `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted)
       SELECT 'wh_' || s || '_' || w, 'st_' || s, 'endpoint', 'https://x.test/', '{order.created,webhook.delivery_failed}', 'sealed'
       FROM generate_series(1, $1::int) s, generate_series(1, $2::int) w`,
      [STORES, ENDPOINTS_PER_STORE],
    );
    await db.query(
      `INSERT INTO events (id, store_id, type, body)
       SELECT 'evt_' || $2 || lpad((s * 1000 + e)::text, 16, '0'), 'st_' || s, 'order.created', '{"data":{}}'
       FROM generate_series(1, $1::int) s, generate_series(1, $3::int) e`,
      [STORES, TODAY, EVENTS_PER_STORE],
    );
    // The due tenth in the queue, the delivered rest in the log.
    await db.query(
      `WITH seeded AS (
         SELECT 'del_' || $1 || lpad(row_number() OVER ()::text, 16, '0') AS id, e.store_id, e.id AS event_id, w.id AS webhook_id,
           e.type AS event_type, row_number() OVER () % 10 = 0 AS pending
         FROM events e JOIN webhooks w ON w.store_id = e.store_id
       ), queued AS (
         INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at, attempt_count)
         SELECT id, store_id, event_id, webhook_id, event_type, now() - interval '1 second', 1 FROM seeded WHERE pending
       )
       INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count)
       SELECT id, store_id, event_id, webhook_id, event_type, 'succeeded', 1 FROM seeded WHERE NOT pending`,
      [TODAY],
    );
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, store_id, number, trigger, started_at, duration_ms, status_code)
       SELECT id, store_id, 1, 'scheduled', now(), 5, 200 FROM delivery_log WHERE status = 'succeeded'`,
    );
    await db.query('ANALYZE');
    const [{ version }] = await db.query<{ version: number }>(`SELECT current_setting('server_version_num')::int / 10000 AS version`);
    major = version;
  }, 120_000);

  afterAll(async () => {
    await pool?.end();
    await dataSource?.destroy();
    await db?.drop();
  });

  /** The statements the repository sends for `work`, captured without running them. */
  async function statementsOf(work: (repository: DeliveryRepository) => Promise<unknown>): Promise<QueryConfig[]> {
    const recorder = new RecordingPool();
    await work(new DeliveryRepository(recorder as unknown as Pool));
    return recorder.sent;
  }

  /** The generic plan PostgreSQL keeps for `statement` (as the dispatcher's named statements get). */
  async function genericPlan(statement: QueryConfig): Promise<string> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`PREPARE plan_of AS ${statement.text}`);
      // EXECUTE takes no bind parameters: the values go in as literals, typed by the PREPARE.
      const args = (statement.values ?? []).map((value) => literal(client, value)).join(', ');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) EXECUTE plan_of(${args})`);
      return stablePlan(rows.map((row) => row['QUERY PLAN']));
    } finally {
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE ALL');
      client.release();
    }
  }

  function outcome(status: 'succeeded' | 'failed', id: string): AttemptOutcome {
    return {
      deliveryId: id,
      leaseToken: 'worker',
      attempt: {
        number: 1,
        trigger: 'scheduled',
        startedAt: new Date(),
        durationMs: 5,
        statusCode: status === 'failed' ? 500 : 200,
        error: null,
        responseBody: null,
      },
      status,
      retryDelayMs: 0,
      decidedAt: Date.now(),
      lastStatusCode: status === 'failed' ? 500 : 200,
      lastError: null,
    };
  }

  function expectSnapshot(name: string, plan: string): void {
    const path = join(PLANS, `${name}.pg${major}.plan.sql`);
    const text = `-- EXPLAIN (COSTS OFF) of ${name}: ${STORES} stores, ${STORES * ENDPOINTS_PER_STORE * EVENTS_PER_STORE} deliveries, PostgreSQL ${major}\n${plan
      .split('\n')
      .map((line) => `-- ${line}`)
      .join('\n')}\n`;
    if (UPDATE) writeFileSync(path, text);
    let snapshot: string | null = null;
    try {
      snapshot = readFileSync(path, 'utf8');
    } catch {
      snapshot = null;
    }
    if (snapshot !== text) {
      throw new Error(
        `the plan of ${name} is not ${relative(process.cwd(), path)}: run \`npm run sql:snapshots\` and review the diff\n${plan}`,
      );
    }
  }

  it('claims through the per-store due index, one store at a time', async () => {
    const [claim] = await statementsOf((repository) => repository.claimDue(100, 10_000, 'worker', NO_LIMITS));
    expectSnapshot('claim', await genericPlan(claim));
  });

  it('records a batch of successes by primary key, partition by partition', async () => {
    const ids = [`del_${TODAY}${'1'.padStart(16, '0')}`, `del_${TODAY}${'2'.padStart(16, '0')}`];
    const [record] = await statementsOf((repository) => repository.recordOutcomes(ids.map((id) => outcome('succeeded', id))));
    expectSnapshot('record', await genericPlan(record));
  });

  it('records a batch with a failure, and the endpoint health that comes with it', async () => {
    const ids = [`del_${TODAY}${'3'.padStart(16, '0')}`];
    const [record] = await statementsOf((repository) =>
      repository.recordOutcomes(
        ids.map((id) => outcome('failed', id)),
        { minFailures: 5, afterMs: 60_000 },
      ),
    );
    expectSnapshot('record-health', await genericPlan(record));
  });
});
