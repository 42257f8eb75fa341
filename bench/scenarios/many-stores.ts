import type { EventType } from '../../src/catalogue/event-catalogue';
import type { Bench } from '../lib/bench';
import { DISPATCH_CONCURRENCY, ENDPOINTS } from '../lib/config';
import { round } from '../lib/stats';
import { bulkPublishStores, createStores, releaseStores } from '../lib/stores';

/** No other scenario publishes it. */
const TYPE: EventType = 'delivery.batch_completed';
const MANY_STORES = 1_000;

/**
 * many-stores. The same backlog of deliveries to 10 endpoints per store, drained by a fresh
 * process, once as one store and once spread over 1,000 stores: what many stores cost beyond
 * many endpoints. Both drains run with STORE_CONCURRENCY at DISPATCH_CONCURRENCY, so that the
 * lone store may use every slot as the thousand together do, and the ratio measures the cost of
 * the stores, not the share one store is allowed.
 */
export async function manyStores(bench: Bench): Promise<void> {
  const total = bench.sizes.manyStoresDeliveries;
  bench.log(`many-stores: ${total} deliveries to 1 store × ${ENDPOINTS} endpoints, then to ${MANY_STORES} stores × ${ENDPOINTS} endpoints`);
  // Each drain starts a process of its own; one started before (or here, to migrate) goes first.
  if (!bench.hookline) await bench.startHookline('many-stores-setup');
  await bench.stopHookline();
  const one = await drain(bench, 'many-stores-1', 1, total);
  const many = await drain(bench, 'many-stores-1000', MANY_STORES, total);
  const ratio = one.perSec > 0 ? round(many.perSec / one.perSec, 2) : 0;
  Object.assign(bench.results, {
    manyStoresOnePerSec: one.perSec,
    manyStoresManyPerSec: many.perSec,
    manyStoresRatio: ratio,
    manyStoresHooklineCpuMsPerDelivery: [one.hooklineCpuMs, many.hooklineCpuMs],
    manyStoresPostgresCpuMsPerDelivery: [one.postgresCpuMs, many.postgresCpuMs],
  });
  bench.row(
    'many-stores',
    `deliveries/s draining ${total}: ${MANY_STORES} stores × ${ENDPOINTS} endpoints ÷ 1 store × ${ENDPOINTS} (${many.perSec} / ${one.perSec})`,
    ratio,
    '≥ 0.9',
    ratio >= 0.9,
  );
  bench.row(
    'many-stores',
    'CPU ms per delivery, Hookline / PostgreSQL: 1 store; 1,000 stores',
    `${one.hooklineCpuMs} / ${one.postgresCpuMs}; ${many.hooklineCpuMs} / ${many.postgresCpuMs}`,
  );
}

async function drain(
  bench: Bench,
  label: string,
  storeCount: number,
  total: number,
): Promise<{ perSec: number; hooklineCpuMs: number; postgresCpuMs: number }> {
  const pool = bench.db!.pool;
  const prefix = `/ok/${label}/`;
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
  await pool.query('VACUUM ANALYZE deliveries');
  await pool.query('ANALYZE webhooks');
  await bench.receiver!.call('clear');
  await bench.startHookline(label, undefined, { STORE_CONCURRENCY: String(DISPATCH_CONCURRENCY) });
  await bench.resetSqlStats();
  const cpu = await bench.cpuSnapshot();
  await releaseStores(pool, stores);
  const arrived = await bench.waitForArrivals(prefix, published.deliveries, 30_000);
  const use = await bench.cpuSince(label, cpu);
  await bench.collectSqlStats(label);
  await bench.stopHookline();
  const perSec = arrived.unique === published.deliveries ? Math.round(arrived.unique / ((arrived.last - arrived.first) / 1000)) : 0;
  const hooklineCpuMs = round((use.hooklineCpuS * 1000) / published.deliveries, 3);
  const postgresCpuMs = round((use.postgresCpuS * 1000) / published.deliveries, 3);
  bench.log(`  ${label}: ${arrived.unique} of ${published.deliveries} in ${Math.round(arrived.last - arrived.first)} ms: ${perSec}/s`);
  return { perSec, hooklineCpuMs, postgresCpuMs };
}
