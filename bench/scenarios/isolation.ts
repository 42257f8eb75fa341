import type { Bench } from '../lib/bench';
import { DELIVERY_TIMEOUT_MS, ENDPOINTS } from '../lib/config';
import { publishAndMeasure } from '../lib/publish-measure';
import { settle } from '../lib/settle';
import { distribution, round } from '../lib/stats';

/** 5. Ten endpoints all healthy, then nine healthy and one that never answers. */
export async function isolation(bench: Bench): Promise<void> {
  const s = bench.sizes;
  bench.log(
    `5 isolation: ${s.isoRate} events/s × ${ENDPOINTS} endpoints for ${(s.isoWarmupMs + s.isoMs) / 1000} s, all healthy, then one never answering (DELIVERY_TIMEOUT_MS=${DELIVERY_TIMEOUT_MS})`,
  );
  await bench.createWebhooks(
    'order.completed',
    bench.ports.map((_, i) => bench.url(i, `/ok/isob/${i}`)),
  );
  await settle(bench);
  const healthy = await publishAndMeasure(
    bench,
    'isolation-healthy',
    'order.completed',
    '/ok/isob/',
    ENDPOINTS,
    s.isoRate,
    s.isoWarmupMs,
    s.isoMs,
  );
  const urls = bench.ports.map((_, i) => (i === ENDPOINTS - 1 ? bench.url(i, `/hang/isoh/${i}`) : bench.url(i, `/ok/isoh/${i}`)));
  const ids = await bench.createWebhooks('product.updated', urls);
  await settle(bench);
  const isolated = await publishAndMeasure(
    bench,
    'isolation-one-hanging',
    'product.updated',
    '/ok/isoh/',
    ENDPOINTS - 1,
    s.isoRate,
    s.isoWarmupMs,
    s.isoMs,
  );
  const hangAttempts = (await bench.summary('/hang/isoh/')).count;
  // Stop the dead endpoint's retries from running into the next scenarios.
  await bench.api('PUT', `/webhooks/${ids[ENDPOINTS - 1]}`, { isActive: false });
  await bench.receiver!.call('release');
  const h = distribution(healthy.latencies);
  const i = distribution(isolated.latencies);
  const ratio = round(i.p99 / h.p99, 2);
  const hApi = distribution(healthy.apiMs);
  const iApi = distribution(isolated.apiMs);
  Object.assign(bench.results, {
    healthyPublishP99Ms: hApi.p99,
    isolatedPublishP99Ms: iApi.p99,
    healthyP50Ms: h.p50,
    healthyP99Ms: h.p99,
    isolatedP50Ms: i.p50,
    isolatedP99Ms: i.p99,
    isolatedMaxMs: i.max,
    isolationRatio: ratio,
    isolationRatePerSec: s.isoRate,
    isolationHealthyDeliveries: h.count,
    isolationIsolatedDeliveries: i.count,
    isolationMissing: healthy.missing + isolated.missing,
    isolationHangingAttempts: hangAttempts,
  });
  bench.row('5 isolation', `all healthy: p50 / p99 (${h.count} deliveries)`, `${h.p50} / ${h.p99} ms`);
  bench.row('5 isolation', `one hanging: healthy p50 / p99 (${i.count})`, `${i.p50} / ${i.p99} ms`);
  bench.row('5 isolation', 'isolated p99 / healthy p99', ratio, '≤ 2', ratio <= 2 && isolated.missing === 0);
  bench.row('5 isolation', 'POST /events answered p99: all healthy / one hanging', `${hApi.p99} / ${iApi.p99} ms`);
  bench.row('5 isolation', 'attempts that reached the hanging endpoint', hangAttempts);
  if (healthy.missing || isolated.missing)
    bench.row('5 isolation', 'missing healthy deliveries', healthy.missing + isolated.missing, '0', false);
  bench.log(`  healthy p99 ${h.p99} ms, isolated p99 ${i.p99} ms (×${ratio}); ${hangAttempts} attempts hung`);
}
