import type { Pool } from 'pg';
import type { EventType } from '../../src/catalogue/event-catalogue';
import type { Bench } from '../lib/bench';
import { DISPATCH_CONCURRENCY, ENDPOINTS } from '../lib/config';
import { round } from '../lib/stats';
import { bulkPublishStores, createStores, releaseStores } from '../lib/stores';

/** No other scenario publishes it. */
const TYPE: EventType = 'delivery.batch_completed';
const MANY_STORES = 1_000;
/** Past the endpoints a worker keeps each one's secret, URL and headers for, had they been fewer. */
const MORE_STORES = 2_000;

/**
 * many-stores. The same backlog of deliveries to 10 endpoints per store, drained by a fresh
 * process, as one store and spread over 1,000 stores: what many stores cost beyond many
 * endpoints. Both run with STORE_CONCURRENCY at DISPATCH_CONCURRENCY, so that the lone store may
 * use every slot as the thousand together do, and the ratio measures the cost of the stores, not
 * the share one store is allowed. Each drain runs three times, in the order one, many, many, one,
 * one, many, and the fastest of each three counts: on a shared machine a neighbour's load only
 * ever slows a drain, by up to a quarter of its rate, so two runs each left the ratio to chance.
 * Then 2,000 stores with as many deliveries each (20,000 endpoints), once: each endpoint's turn
 * comes back after 19,999 others, which finds whatever a worker keeps per endpoint too small.
 */
export async function manyStores(bench: Bench): Promise<void> {
  const total = bench.sizes.manyStoresDeliveries;
  bench.log(`many-stores: ${total} deliveries to 1 store × ${ENDPOINTS} endpoints, then to ${MANY_STORES} stores × ${ENDPOINTS} endpoints`);
  // Each drain starts a process of its own; one started before (or here, to migrate) goes first.
  if (!bench.hookline) await bench.startHookline('many-stores-setup');
  await bench.stopHookline();
  const runs = [
    await drain(bench, 'many-stores-1-a', 1, total),
    await drain(bench, 'many-stores-1000-a', MANY_STORES, total),
    await drain(bench, 'many-stores-1000-b', MANY_STORES, total),
    await drain(bench, 'many-stores-1-b', 1, total),
    await drain(bench, 'many-stores-1-c', 1, total),
    await drain(bench, 'many-stores-1000-c', MANY_STORES, total),
  ];
  const more = await drain(bench, 'many-stores-2000', MORE_STORES, (total / MANY_STORES) * MORE_STORES);
  const best = (...drains: Drain[]): Drain => drains.reduce((a, b) => (a.perSec >= b.perSec ? a : b));
  const one = best(runs[0], runs[3], runs[4]);
  const many = best(runs[1], runs[2], runs[5]);
  // Three places: at two, a ratio just under the target would read as meeting it.
  const ratio = one.perSec > 0 ? round(many.perSec / one.perSec, 3) : 0;
  const moreRatio = one.perSec > 0 ? round(more.perSec / one.perSec, 2) : 0;
  // The worker's CPU over all three drains of each side: what the code decides, with less of the
  // machine's speed in it than the fastest drain's rate (two sides alike come within a few %).
  const cpuOne = hooklineCpuS(runs[0], runs[3], runs[4]);
  const cpuMany = hooklineCpuS(runs[1], runs[2], runs[5]);
  Object.assign(bench.results, {
    manyStoresOnePerSec: one.perSec,
    manyStoresManyPerSec: many.perSec,
    manyStoresRuns: runs.map((r) => r.perSec),
    manyStoresRatio: ratio,
    manyStoresMorePerSec: more.perSec,
    manyStoresMoreRatio: moreRatio,
    manyStoresHooklineCpuMsPerDelivery: [one.hooklineCpuMs, many.hooklineCpuMs, more.hooklineCpuMs],
    manyStoresPostgresCpuMsPerDelivery: [one.postgresCpuMs, many.postgresCpuMs, more.postgresCpuMs],
    manyStoresHooklineCpuS: [cpuOne, cpuMany],
  });
  bench.row(
    'many-stores',
    `deliveries/s draining ${total}, the fastest of three: ${MANY_STORES} stores × ${ENDPOINTS} endpoints ÷ 1 store × ${ENDPOINTS} (${many.perSec} / ${one.perSec}; runs ${runs.map((r) => r.perSec).join(', ')})`,
    ratio,
    '≥ 0.9',
    ratio >= 0.9,
  );
  bench.row(
    'many-stores',
    `deliveries/s draining ${(total / MANY_STORES) * MORE_STORES}: ${MORE_STORES} stores × ${ENDPOINTS} endpoints ÷ 1 store × ${ENDPOINTS} (${more.perSec} / ${one.perSec})`,
    moreRatio,
  );
  bench.row(
    'many-stores',
    'CPU ms per delivery, Hookline / PostgreSQL: 1 store; 1,000 stores; 2,000 stores',
    `${one.hooklineCpuMs} / ${one.postgresCpuMs}; ${many.hooklineCpuMs} / ${many.postgresCpuMs}; ${more.hooklineCpuMs} / ${more.postgresCpuMs}`,
  );
  bench.row(
    'many-stores',
    `Hookline CPU s over the three drains of each side: ${MANY_STORES} stores ÷ 1 store (${cpuMany} / ${cpuOne})`,
    cpuOne > 0 ? round(cpuMany / cpuOne, 3) : 0,
  );
}

function hooklineCpuS(...drains: Drain[]): number {
  return round(
    drains.reduce((sum, d) => sum + d.hooklineCpuS, 0),
    2,
  );
}

/** The server's WAL and checkpoint counters: a checkpoint inside a drain makes it write whole pages. */
async function walCounters(pool: Pool): Promise<{ bytes: number; fpi: number; checkpoints: number }> {
  const { rows } = await pool.query<{ bytes: string; fpi: string; checkpoints: string }>(
    `SELECT w.wal_bytes AS bytes, w.wal_fpi AS fpi, b.checkpoints_timed + b.checkpoints_req AS checkpoints FROM pg_stat_wal w, pg_stat_bgwriter b`,
  );
  return { bytes: Number(rows[0].bytes), fpi: Number(rows[0].fpi), checkpoints: Number(rows[0].checkpoints) };
}

interface Drain {
  perSec: number;
  hooklineCpuS: number;
  hooklineCpuMs: number;
  postgresCpuMs: number;
}

async function drain(bench: Bench, label: string, storeCount: number, total: number): Promise<Drain> {
  const pool = bench.db!.pool;
  const prefix = `/ok/${label}/`;
  // Stores and endpoints of their own for each drain: the thousand stores' first attempts (each
  // endpoint's secret and URL) are part of what is measured.
  const stores = await createStores(pool, {
    stores: storeCount,
    endpointsPerStore: ENDPOINTS,
    type: TYPE,
    url: (s, e) => bench.url(e, `${prefix}${s}/${e}`),
  });
  // Written not yet due, and released once the process is up: the drain starts at the release.
  const published = await bulkPublishStores(pool, stores, {
    type: TYPE,
    eventsPerStore: total / ENDPOINTS / storeCount,
    dueInSeconds: 3_600,
  });
  await pool.query('VACUUM ANALYZE delivery_queue');
  await pool.query('ANALYZE webhooks');
  await bench.receiver!.call('clear');
  await bench.startHookline(label, undefined, { STORE_CONCURRENCY: String(DISPATCH_CONCURRENCY) });
  await bench.resetSqlStats();
  const cpu = await bench.cpuSnapshot();
  const wal = await walCounters(pool);
  await bench.profileStart();
  await releaseStores(pool, stores);
  const arrived = await bench.waitForArrivals(prefix, published.deliveries, 60_000);
  const use = await bench.cpuSince(label, cpu);
  const walEnd = await walCounters(pool);
  await bench.collectSqlStats(label);
  await bench.stopHookline();
  const perSec = arrived.unique === published.deliveries ? Math.round(arrived.unique / ((arrived.last - arrived.first) / 1000)) : 0;
  const hooklineCpuMs = round((use.hooklineCpuS * 1000) / published.deliveries, 3);
  const postgresCpuMs = round((use.postgresCpuS * 1000) / published.deliveries, 3);
  bench.log(
    `  ${label}: ${arrived.unique} of ${published.deliveries} in ${Math.round(arrived.last - arrived.first)} ms: ${perSec}/s; ` +
      `server WAL ${Math.round((walEnd.bytes - wal.bytes) / published.deliveries)} B per delivery, ` +
      `${walEnd.fpi - wal.fpi} full-page images, ${walEnd.checkpoints - wal.checkpoints} checkpoints begun`,
  );
  return { perSec, hooklineCpuS: use.hooklineCpuS, hooklineCpuMs, postgresCpuMs };
}
