import { EVENT_CATALOGUE, type EventType } from '../../src/catalogue/event-catalogue';
import { loadConfig } from '../../src/config/app-config';
import type { Bench } from '../lib/bench';
import { sleep } from '../lib/children';
import { DISPATCH_CONCURRENCY, ENDPOINTS } from '../lib/config';
import { wallMs } from '../lib/protocol';
import { distribution, round } from '../lib/stats';
import { type BenchStore, bulkPublishStores, createStores, disableStores, releaseStores } from '../lib/stores';

/** No other scenario publishes it, so every count here is this scenario's. */
const TYPE: EventType = 'delivery.batch_completed';
/** The noisy store's queue: 300 events to each of its 10 endpoints. */
const NOISY_EVENTS = 300;
/** The quiet store's events, published one at a time. */
const QUIET_EVENTS = 50;
/** Stores × endpoints of the throughput phases: 1,000 endpoints, the first store's 10 hanging in one of them. */
const THROUGHPUT_STORES = 100;
/** Hookline's DELIVERY_TIMEOUT_MS by default. */
const TIMEOUT_MS = loadConfig({}).deliveryTimeoutMs;
/** STORE_CONCURRENCY as Hookline runs here (its default, a quarter of DISPATCH_CONCURRENCY). */
const STORE_SLOTS = DISPATCH_CONCURRENCY / 4;

/**
 * noisy-neighbour. One store with 10 endpoints that accept connections and never answer, and
 * 3,000 deliveries queued to them, beside another store's events published one at a time: how
 * long those take from publish to arrival. Then 1,000 endpoints of 100 stores drained with the 10
 * of the first store hanging, against the same drain with all of them answering.
 */
export async function noisyNeighbour(bench: Bench): Promise<void> {
  bench.log(
    `noisy-neighbour: ${QUIET_EVENTS} events of a quiet store beside ${ENDPOINTS} hanging endpoints with ${NOISY_EVENTS * ENDPOINTS} deliveries queued; then ${THROUGHPUT_STORES * ENDPOINTS} endpoints drained with and without 1 % of them hanging (DELIVERY_TIMEOUT_MS=${TIMEOUT_MS}, Hookline's default)`,
  );
  // A process of its own, with the default time limit: how long a hanging endpoint holds its
  // slots is the point here (the other scenarios shorten it to 2 s).
  await bench.stopHookline();
  await bench.startHookline('noisy-neighbour', undefined, { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
  try {
    await latencyBesideNoisyStore(bench);
    await throughputWithHangingStore(bench);
  } finally {
    await bench.stopHookline();
    await bench.startHookline('main');
  }
}

/** A store of the platform, created through the API with a key of its own. */
async function storeWithKey(bench: Bench, name: string): Promise<{ id: string; key: string }> {
  const store = await bench.api<{ id: string }>('POST', '/stores', { name });
  const { key } = await bench.api<{ key: string }>('POST', `/stores/${store.id}/api-keys`, {
    name: `${name} key`,
    scopes: ['webhooks:read', 'webhooks:write', 'events:write'],
  });
  return { id: store.id, key };
}

async function latencyBesideNoisyStore(bench: Bench): Promise<void> {
  const noisy = await storeWithKey(bench, 'noisy');
  const quiet = await storeWithKey(bench, 'quiet');
  const noisyHooks: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const hook = await bench.api<{ id: string }>(
      'POST',
      '/webhooks',
      { name: `hanging ${i}`, url: bench.url(i, `/hang/nn/${i}`), events: [TYPE] },
      noisy.key,
    );
    noisyHooks.push(hook.id);
  }
  await bench.api('POST', '/webhooks', { name: 'quiet', url: bench.url(0, '/ok/nnq/'), events: [TYPE] }, quiet.key);
  await bench.receiver!.call('clear');
  const data = EVENT_CATALOGUE[TYPE].example;

  const queuedAt = wallMs();
  await bench.api('POST', '/events/batch', { events: Array.from({ length: NOISY_EVENTS }, () => ({ type: TYPE, data })) }, noisy.key);
  // The hanging endpoints hold what the noisy store may take of the slots.
  const deadline = Date.now() + 5_000;
  while ((await bench.summary('/hang/nn/')).count < STORE_SLOTS && Date.now() < deadline) await sleep(20);

  const cpu = await bench.cpuSnapshot();
  const publishedAt = new Map<string, number>();
  /** Publishes `count` events of the quiet store one at a time, each once the one before arrived. */
  const publishQuietly = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++) {
      const before = (await bench.summary('/ok/nnq/')).unique;
      const started = wallMs();
      const event = await bench.api<{ id: string }>('POST', '/events', { type: TYPE, data }, quiet.key);
      publishedAt.set(event.id, started);
      const waitUntil = Date.now() + 30_000;
      while ((await bench.summary('/ok/nnq/')).unique <= before && Date.now() < waitUntil) await sleep(1);
    }
  };
  // Half while the first attempts hang, half once they have timed out and the noisy store's
  // retries and the rest of its queue compete for the slots again (more requests reach it).
  await publishQuietly(QUIET_EVENTS / 2);
  const timedOut = Date.now() + 3 * TIMEOUT_MS;
  while ((await bench.summary('/hang/nn/')).count <= STORE_SLOTS && Date.now() < timedOut) await sleep(20);
  await publishQuietly(QUIET_EVENTS / 2);
  await bench.cpuSince('noisy-neighbour-latency', cpu);
  const arrivals = await bench.arrivals('/ok/nnq/');
  const latencies: number[] = [];
  for (let i = 0; i < arrivals.id.length; i++) {
    const started = publishedAt.get(arrivals.id[i]);
    if (started !== undefined) latencies.push(round(arrivals.at[i] - started, 2));
  }
  const hanging = await bench.arrivals('/hang/nn/');
  // Before the first of them could time out, every hanging request still holds its slot.
  const heldAtOnce = hanging.at.filter((at) => at < queuedAt + TIMEOUT_MS).length;

  for (const id of noisyHooks) await bench.api('PUT', `/webhooks/${id}`, { isActive: false }, noisy.key);
  await bench.receiver!.call('release');

  const d = distribution(latencies);
  const missing = QUIET_EVENTS - latencies.length;
  Object.assign(bench.results, {
    noisyNeighbourP50Ms: d.p50,
    noisyNeighbourP99Ms: d.p99,
    noisyNeighbourMaxMs: d.max,
    noisyNeighbourMissing: missing,
    noisyNeighbourHeldAtOnce: heldAtOnce,
  });
  bench.row(
    'noisy-neighbour',
    `another store's publish → arrival p50 / p99 (${QUIET_EVENTS} events, one at a time) beside ${ENDPOINTS} hanging endpoints with ${NOISY_EVENTS * ENDPOINTS} queued`,
    `${d.p50} / ${d.p99} ms`,
    'p99 ≤ 250 ms',
    d.p99 <= 250 && missing === 0,
  );
  bench.row(
    'noisy-neighbour',
    `requests the hanging endpoints held at once (before the first ${TIMEOUT_MS} ms timeout)`,
    heldAtOnce,
    `≤ ${STORE_SLOTS} (STORE_CONCURRENCY)`,
    heldAtOnce <= STORE_SLOTS,
  );
  bench.log(`  quiet store p50 ${d.p50} ms, p99 ${d.p99} ms, max ${d.max} ms; ${heldAtOnce} requests hung at once`);
}

/**
 * Deliveries/s of the endpoints that answer, first to last arrival, with `stores` backlogs of
 * `events` events each released at once on the running Hookline.
 */
async function drainStores(
  bench: Bench,
  label: string,
  stores: BenchStore[],
  events: number,
  prefix: string,
  expected: number,
): Promise<number> {
  const pool = bench.db!.pool;
  await bulkPublishStores(pool, stores, { type: TYPE, eventsPerStore: events, dueInSeconds: 3_600 });
  await bench.receiver!.call('clear');
  const cpu = await bench.cpuSnapshot();
  await releaseStores(pool, stores);
  const arrived = await bench.waitForArrivals(prefix, expected, 30_000);
  await bench.cpuSince(label, cpu);
  const perSec = Math.round(arrived.unique / ((arrived.last - arrived.first) / 1000));
  bench.log(`  ${label}: ${arrived.unique} of ${expected} at ${prefix} in ${Math.round(arrived.last - arrived.first)} ms: ${perSec}/s`);
  return arrived.unique === expected ? perSec : 0;
}

async function throughputWithHangingStore(bench: Bench): Promise<void> {
  const events = bench.sizes.noisyThroughputEvents;
  const healthy = THROUGHPUT_STORES * ENDPOINTS * events;
  const others = (THROUGHPUT_STORES - 1) * ENDPOINTS * events;
  const pool = bench.db!.pool;
  // Each phase its own stores and paths, after an uncounted drain that warms the process up; the
  // first phase again at the end in a full run, so that a machine slowing down or speeding up
  // shows instead of counting against the hanging phase.
  const phases: Array<'warm-up' | 'healthy' | 'hanging'> = [
    'warm-up',
    'healthy',
    'hanging',
    ...(bench.options.quick ? [] : ['healthy' as const]),
  ];
  const rates = { 'warm-up': [] as number[], healthy: [] as number[], hanging: [] as number[] };
  for (const [n, phase] of phases.entries()) {
    const stores = await createStores(pool, {
      stores: THROUGHPUT_STORES,
      endpointsPerStore: ENDPOINTS,
      type: TYPE,
      url: (s, e) => bench.url(e, phase === 'hanging' && s === 0 ? `/hang/nnt${n}/${e}` : `/ok/nnt${n}/${s}/${e}`),
    });
    const rate = await drainStores(
      bench,
      `noisy-neighbour-${phase}-${n}`,
      stores,
      events,
      `/ok/nnt${n}/`,
      phase === 'hanging' ? others : healthy,
    );
    rates[phase].push(rate);
    await disableStores(pool, stores);
    if (phase === 'hanging') await bench.receiver!.call('release');
  }
  const without = rates.healthy.reduce((a, b) => a + b, 0) / rates.healthy.length;
  const ratio = without > 0 ? round(rates.hanging[0] / without, 2) : 0;
  Object.assign(bench.results, {
    noisyNeighbourHealthyPerSec: rates.healthy,
    noisyNeighbourHangingPerSec: rates.hanging[0],
    noisyNeighbourThroughputRatio: ratio,
  });
  bench.row(
    'noisy-neighbour',
    `deliveries/s of ${others} to 990 endpoints while one store's 10 hang ÷ ${healthy} to all 1,000 answering (${rates.hanging[0]} / ${rates.healthy.join(', ')})`,
    ratio,
    '≥ 0.8',
    ratio >= 0.8,
  );
}
