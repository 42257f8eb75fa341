/**
 * A backlog drained on a Citus cluster and on one PostgreSQL (docs/scaling.md, "Citus"): 50,000
 * deliveries to 10 endpoints of each of 20 stores, written not yet due, released at once and
 * drained by one and by two Hookline worker processes; deliveries/s from release to the last
 * success, and CPU ms per delivery of Hookline and of each PostgreSQL server (a node's postmaster
 * and its children, read from /proc).
 *
 *   node -r ts-node/register/transpile-only bench/studies/citus-drain.ts <server URL> <label> [deliveries]
 *
 * The URL is a superuser's: a plain server's, or a coordinator's with its workers registered (the
 * database is made per run on every node, as the end-to-end specs make theirs).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { runMigrationsLocked } from '../../src/database/run-migrations';
import { ChildApp } from '../../test/support/child-app';
import { citusWorkers, createTestDatabase } from '../../test/support/database';
import { Receiver } from '../../test/support/receiver';
import { ENCRYPTION_KEY } from '../lib/config';
import { bulkPublishStores, createStores, releaseStores } from '../lib/stores';

const STORES = 20;
const ENDPOINTS = 10;
const TICKS = 100;

function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds of a PostgreSQL server: its postmaster and every process it started. */
function serverCpu(postmaster: number): number {
  let total = cpuSeconds(postmaster);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(stat[1]) === postmaster) total += cpuSeconds(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

async function main(): Promise<void> {
  const [url, label, size] = process.argv.slice(2);
  const total = Number(size ?? 50_000);
  process.env.DATABASE_URL = url;
  const workers = await citusWorkers();
  const servers: Array<{ name: string; pid: number }> = [];
  const pidOf = async (serverUrl: string): Promise<number> => {
    const pool = new Pool({ connectionString: serverUrl, max: 1 });
    const { rows } = await pool.query<{ dir: string }>(`SELECT current_setting('data_directory') AS dir`);
    await pool.end();
    return Number(readFileSync(`${rows[0].dir}/postmaster.pid`, 'utf8').split('\n')[0]);
  };
  servers.push({ name: workers.length > 0 ? 'coordinator' : 'postgres', pid: await pidOf(url) });
  for (const [i, worker] of workers.entries()) servers.push({ name: `node ${i + 1}`, pid: await pidOf(worker) });

  const receiver = await Receiver.start();
  const results: unknown[] = [];
  for (const processes of [1, 2]) {
    const db = await createTestDatabase();
    const migrate = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(migrate);
    await migrate.destroy();
    const pool = new Pool({ connectionString: db.url, max: 4 });
    const stores = await createStores(pool, {
      stores: STORES,
      endpointsPerStore: ENDPOINTS,
      type: 'delivery.batch_completed',
      url: (s, e) => `${receiver.url}/drain/${s}/${e}`,
    });
    const published = await bulkPublishStores(pool, stores, {
      type: 'delivery.batch_completed',
      eventsPerStore: total / ENDPOINTS / STORES,
      dueInSeconds: 3_600,
    });
    const apps = await Promise.all(
      Array.from({ length: processes }, (_, i) =>
        ChildApp.start({
          databaseUrl: db.url,
          name: `citus-drain-${label}-${processes}-${i}`,
          startDeadlineMs: 150_000,
          env: {
            ROLE: 'worker',
            SECRET_ENCRYPTION_KEY: ENCRYPTION_KEY,
            DISPATCH_CONCURRENCY: String(512 / processes),
            STORE_CONCURRENCY: String(512 / processes),
            LOG_LEVEL: 'error',
          },
        }),
      ),
    );
    receiver.requests.length = 0;
    const hooklineBefore = apps.map((app) => cpuSeconds(app.pid));
    const serversBefore = servers.map((server) => serverCpu(server.pid));
    const started = performance.now();
    await releaseStores(pool, stores);
    for (;;) {
      const { rows } = await pool.query<{ left: number }>(`SELECT count(*)::int AS left FROM deliveries WHERE status = 'pending'`);
      if (rows[0].left === 0) break;
      if (performance.now() - started > 600_000) throw new Error(`${rows[0].left} still pending after 10 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const seconds = (performance.now() - started) / 1000;
    const perDelivery = (s: number): number => Math.round(((s * 1000) / published.deliveries) * 1000) / 1000;
    const hooklineCpu = apps.reduce((sum, app, i) => sum + cpuSeconds(app.pid) - hooklineBefore[i], 0);
    const [{ failed }] = (await pool.query<{ failed: number }>(`SELECT count(*)::int AS failed FROM deliveries WHERE status = 'failed'`))
      .rows;
    const row = {
      label,
      processes,
      deliveries: published.deliveries,
      failed,
      received: receiver.requests.length,
      perSecond: Math.round(published.deliveries / seconds),
      hooklineCpuMsPerDelivery: perDelivery(hooklineCpu),
      postgresCpuMsPerDelivery: Object.fromEntries(
        servers.map((server, i) => [server.name, perDelivery(serverCpu(server.pid) - serversBefore[i])]),
      ),
    };
    console.log(JSON.stringify(row));
    results.push(row);
    await ChildApp.killAll();
    await pool.end();
    await db.drop();
  }
  await receiver.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
