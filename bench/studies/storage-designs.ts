/**
 * What PostgreSQL spends on a delivery's rows, by storage design, apart from everything else:
 * `npm run bench:storage` against the server of DATABASE_URL (it creates and drops its own
 * database). Each design runs the same life of a delivery, 500 at a time on one connection with
 * the dispatcher's session settings: publish (insert), claim (lease the 500 oldest due, past the
 * 1,000 still in flight), and record the outcome of the batch claimed two rounds earlier (an
 * attempt row and the final status). Reported per delivery: the backend's CPU (from /proc, plus
 * the CPU of any VACUUM the design runs), WAL bytes, and the bytes left on disk once delivered.
 *
 * Options: --rounds=N (batches of 500 per run; default 400), --runs=N (runs per design, in
 * rotation; default 3). The findings are in docs/decisions.md (Studies).
 */
import { Client } from 'pg';
import { DISPATCH_SESSION_SETTINGS } from '../../src/dispatch/store/dispatch-pool';
import { createDatabase } from '../lib/db';
import { processCpuSeconds } from '../lib/proc';
import { max, median, min, round } from '../lib/stats';

const BATCH = 500;
/** Batches in flight between a claim and its outcome, as with a worker's requests and its pending writes. */
const IN_FLIGHT_BATCHES = 2;

interface Design {
  name: string;
  schema: string;
  /** Vacuumed every second on a second connection, its CPU counted with the design's. */
  vacuum?: string;
  /** The tables whose size is the delivery's cost on disk once delivered. */
  logTables: string[];
  publish: string;
  claim: string;
  record: string;
}

const IDS = `SELECT 'del_' || lpad(($1::bigint + g)::text, 14, '0') AS id, g FROM generate_series(1, ${BATCH}) g`;
const ATTEMPTS = (table: string) => `INSERT INTO ${table} (delivery_id, store_id, number, started_at, duration_ms, status_code)
  SELECT id, 'sto_1', 1, now(), 3, 200 FROM (${IDS}) i`;

/** Today's: one row per delivery, updated by the claim and by the outcome, each a new version in every index. */
const TODAY: Design = {
  name: 'one table, updated in place (today)',
  schema: `
    CREATE TABLE deliveries (id text NOT NULL, store_id text NOT NULL, event_id text NOT NULL, webhook_id text NOT NULL,
      event_type text NOT NULL, status text NOT NULL DEFAULT 'pending', attempt_count int NOT NULL DEFAULT 0,
      cycle_attempts int NOT NULL DEFAULT 0, next_attempt_at timestamptz, lease_token text, last_status_code int, last_error text,
      created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(), ordered boolean NOT NULL DEFAULT false,
      PRIMARY KEY (id, store_id));
    CREATE INDEX ON deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX ON deliveries (webhook_id, event_id) WHERE status = 'pending' AND ordered;
    CREATE INDEX ON deliveries (webhook_id, id);`,
  logTables: ['deliveries', 'delivery_attempts'],
  publish: `INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
    SELECT id, 'sto_1', 'evt_' || substr(id, 5), 'whk_' || (g % 10), 'order.created', now() FROM (${IDS}) i`,
  claim: `UPDATE deliveries d SET next_attempt_at = now() + interval '30 s', lease_token = 'tok',
      attempt_count = d.attempt_count + 1, cycle_attempts = d.cycle_attempts + 1, updated_at = now()
    WHERE d.id = ANY (ARRAY(SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= now()
      ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)) AND d.store_id = 'sto_1'`,
  record: `WITH attempts AS (${ATTEMPTS('delivery_attempts')})
    UPDATE deliveries d SET status = 'succeeded', next_attempt_at = NULL, lease_token = NULL, last_status_code = 200, updated_at = now()
    WHERE d.id = ANY (ARRAY(SELECT id FROM (${IDS}) i)) AND d.store_id = 'sto_1' AND d.lease_token = 'tok'`,
};

/**
 * Pending work in a small table whose lease is a column no index reads (the claim's update is
 * HOT), kept small by a VACUUM every second; a delivery enters the log once, when it ends.
 */
const QUEUE_AND_LOG: Design = {
  name: 'pending queue + insert-only log',
  schema: `
    CREATE TABLE delivery_queue (id text NOT NULL, store_id text NOT NULL, event_id text NOT NULL, webhook_id text NOT NULL,
      event_type text NOT NULL, ordered boolean NOT NULL DEFAULT false, next_attempt_at timestamptz NOT NULL,
      lease_token text, lease_until timestamptz, attempt_count int NOT NULL DEFAULT 0, cycle_attempts int NOT NULL DEFAULT 0,
      last_status_code int, last_error text, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (id, store_id))
      WITH (fillfactor = 50);
    CREATE INDEX ON delivery_queue (next_attempt_at);
    CREATE INDEX ON delivery_queue (webhook_id, id);
    CREATE TABLE deliveries (id text NOT NULL, store_id text NOT NULL, event_id text NOT NULL, webhook_id text NOT NULL,
      event_type text NOT NULL, status text NOT NULL, attempt_count int NOT NULL, last_status_code int, last_error text,
      created_at timestamptz NOT NULL, finished_at timestamptz NOT NULL DEFAULT now(), ordered boolean NOT NULL DEFAULT false,
      PRIMARY KEY (id, store_id));
    CREATE INDEX ON deliveries (webhook_id, id);`,
  vacuum: 'delivery_queue',
  logTables: ['deliveries', 'delivery_attempts'],
  publish: `INSERT INTO delivery_queue (id, store_id, event_id, webhook_id, event_type, next_attempt_at)
    SELECT id, 'sto_1', 'evt_' || substr(id, 5), 'whk_' || (g % 10), 'order.created', now() FROM (${IDS}) i`,
  claim: `UPDATE delivery_queue q SET lease_until = now() + interval '30 s', lease_token = 'tok',
      attempt_count = q.attempt_count + 1, cycle_attempts = q.cycle_attempts + 1
    WHERE q.id = ANY (ARRAY(SELECT id FROM delivery_queue WHERE next_attempt_at <= now() AND (lease_until IS NULL OR lease_until <= now())
      ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)) AND q.store_id = 'sto_1'`,
  record: `WITH attempts AS (${ATTEMPTS('delivery_attempts')}), ended AS (
      DELETE FROM delivery_queue q WHERE q.id = ANY (ARRAY(SELECT id FROM (${IDS}) i)) AND q.store_id = 'sto_1' AND q.lease_token = 'tok'
      RETURNING q.*)
    INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, status, attempt_count, last_status_code, created_at, ordered)
    SELECT id, store_id, event_id, webhook_id, event_type, 'succeeded', attempt_count, 200, created_at, ordered FROM ended`,
};

/** The same without its VACUUM, as where autovacuum is off or falls behind. */
const QUEUE_UNVACUUMED: Design = { ...QUEUE_AND_LOG, name: 'pending queue + insert-only log, queue never vacuumed', vacuum: undefined };

const ATTEMPTS_TABLE = `CREATE TABLE delivery_attempts (delivery_id text NOT NULL, number int NOT NULL, started_at timestamptz NOT NULL,
  duration_ms int NOT NULL, status_code int, error text, response_body text, trigger text NOT NULL DEFAULT 'scheduled',
  store_id text NOT NULL, PRIMARY KEY (delivery_id, number, store_id))`;

interface RunFigures {
  cpuUsPerDelivery: number;
  walBytesPerDelivery: number;
  diskBytesPerDelivery: number;
}

async function connect(url: string): Promise<{ client: Client; pid: number }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  for (const [name, value] of Object.entries(DISPATCH_SESSION_SETTINGS)) await client.query(`SET ${name} = '${value}'`);
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  return { client, pid };
}

async function runDesign(url: string, design: Design, rounds: number): Promise<RunFigures> {
  const setup = new Client({ connectionString: url });
  await setup.connect();
  await setup.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
  await setup.query(design.schema);
  await setup.query(ATTEMPTS_TABLE);
  const { client, pid } = await connect(url);
  const vacuum = design.vacuum ? await connect(url) : undefined;
  // One VACUUM at a time, chained, so that the last one is waited for before the CPU is read.
  let vacuuming = Promise.resolve();
  const vacuumNext = (): void => {
    vacuuming = vacuuming.then(async () => {
      await vacuum?.client.query(`VACUUM ${design.vacuum}`);
    });
  };
  const timer = vacuum && setInterval(vacuumNext, 1000);
  const cpu = () => processCpuSeconds(pid) + (vacuum ? processCpuSeconds(vacuum.pid) : 0);

  const walBefore = (await setup.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  const cpuBefore = cpu();
  for (let i = 0; i < rounds + IN_FLIGHT_BATCHES; i += 1) {
    const base = i * BATCH;
    if (i < rounds) {
      await client.query({ name: 'publish', text: design.publish, values: [base] });
      await client.query({ name: 'claim', text: design.claim });
    }
    if (i >= IN_FLIGHT_BATCHES) await client.query({ name: 'record', text: design.record, values: [base - IN_FLIGHT_BATCHES * BATCH] });
  }
  if (timer) clearInterval(timer);
  await vacuuming;
  const cpuUsed = cpu() - cpuBefore;
  const wal = (await setup.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes', [walBefore])).rows[0]
    .bytes;
  const size = (
    await setup.query<{ bytes: string }>(`SELECT sum(pg_total_relation_size(t))::bigint AS bytes FROM unnest($1::regclass[]) t`, [
      design.logTables,
    ])
  ).rows[0].bytes;
  const delivered = (await setup.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'succeeded'`)).rows[0].n;
  if (delivered !== rounds * BATCH) throw new Error(`${design.name}: ${delivered} of ${rounds * BATCH} deliveries ended`);
  await Promise.all([client.end(), vacuum?.client.end(), setup.end()]);
  return {
    cpuUsPerDelivery: round((cpuUsed * 1e6) / delivered, 1),
    walBytesPerDelivery: Math.round(Number(wal) / delivered),
    diskBytesPerDelivery: Math.round(Number(size) / delivered),
  };
}

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split('=')[1]) : fallback;
}

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DATABASE_URL must name a PostgreSQL server (the benchmark creates its own database on it)');
  const rounds = option('rounds', 400);
  const runs = option('runs', 3);
  const database = await createDatabase(serverUrl, '_storage');
  const designs = [TODAY, QUEUE_AND_LOG, QUEUE_UNVACUUMED];
  const figures = new Map<Design, RunFigures[]>(designs.map((d) => [d, []]));
  try {
    await database.pool.end();
    for (let run = 0; run < runs; run += 1) {
      for (const design of designs) {
        const result = await runDesign(database.url, design, rounds);
        figures.get(design)!.push(result);
        console.log(`${design.name}, run ${run + 1}: ${JSON.stringify(result)}`);
      }
    }
  } finally {
    await database.drop();
  }
  console.log(`\n${rounds * BATCH} deliveries per run, median of ${runs}:\n`);
  console.log('| design | PostgreSQL CPU µs per delivery | WAL bytes per delivery | deliveries + attempts on disk, bytes per delivery |');
  console.log('|---|---:|---:|---:|');
  for (const [design, results] of figures) {
    const cpu = results.map((r) => r.cpuUsPerDelivery);
    console.log(
      `| ${design.name} | ${median(cpu)} (${min(cpu)}-${max(cpu)}) | ${median(results.map((r) => r.walBytesPerDelivery))} | ${median(results.map((r) => r.diskBytesPerDelivery))} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
