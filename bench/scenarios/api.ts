import type { ApiLoadArgs, ApiLoadResult } from '../api-load';
import type { Bench } from '../lib/bench';
import { ADMIN_KEY } from '../lib/config';
import { addCpuUse, CpuUse } from '../lib/cpu';
import { round } from '../lib/stats';

/** 7. GET /webhooks with an API key vs a bare @Public route on the same process (autocannon). */
export async function managementApi(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const base = bench.hookline!.baseUrl;
  bench.log(
    `7 management API: autocannon, ${s.apiConnections} connections, ${s.apiSec} s per route in two windows (bare, list, list, bare)`,
  );
  const bare: ApiLoadArgs = {
    url: `${base}/api/v1/external/bench/bare`,
    headers: {},
    connections: s.apiConnections,
    durationSec: s.apiSec,
  };
  const list: ApiLoadArgs = {
    url: `${base}/api/v1/external/webhooks`,
    headers: { 'x-api-key': ADMIN_KEY },
    connections: s.apiConnections,
    durationSec: s.apiSec,
  };
  if (s.apiWarmupSec > 0) {
    await bench.registry.run<ApiLoadResult>('api-load', { ...bare, durationSec: s.apiWarmupSec });
    await bench.registry.run<ApiLoadResult>('api-load', { ...list, durationSec: s.apiWarmupSec });
  }
  // Bare, list, list, bare, each for half the time: a machine whose speed drifts during the 20 s
  // (a neighbour starting or stopping) weighs on both routes alike instead of on one of them.
  const half = s.apiSec / 2;
  const bare1 = await apiWindow(bench, 'api-bare', { ...bare, durationSec: half });
  const list1 = await apiWindow(bench, 'api-webhooks', { ...list, durationSec: half });
  const list2 = await apiWindow(bench, 'api-webhooks', { ...list, durationSec: half }, list1.use);
  const bare2 = await apiWindow(bench, 'api-bare', { ...bare, durationSec: half }, bare1.use);
  bench.log(
    `  req/s by window: bare ${bare1.result.perSec}, GET /webhooks ${list1.result.perSec}, GET /webhooks ${list2.result.perSec}, bare ${bare2.result.perSec}`,
  );
  const bareResult = mergeApiLoads(bare1.result, bare2.result);
  const listResult = mergeApiLoads(list1.result, list2.result);
  const ratio = round(listResult.perSec / bareResult.perSec, 3);
  Object.assign(bench.results, {
    apiPerSec: listResult.perSec,
    apiCeilingPerSec: bareResult.perSec,
    apiRatio: ratio,
    apiP99Ms: listResult.latencyP99Ms,
    apiCeilingP99Ms: bareResult.latencyP99Ms,
    apiNon2xx: listResult.non2xx + bareResult.non2xx,
    apiErrors: listResult.errors + bareResult.errors,
  });
  bench.row('7 API', 'bare route req/s (ceiling)', bareResult.perSec);
  bench.row('7 API', 'GET /webhooks req/s (X-API-Key)', listResult.perSec);
  bench.row('7 API', 'ratio to the bare route', ratio, '≥ 0.5', ratio >= 0.5);
  bench.row('7 API', 'GET /webhooks p50 / p99 latency', `${listResult.latencyP50Ms} / ${listResult.latencyP99Ms} ms`);
  if (listResult.non2xx + bareResult.non2xx + listResult.errors + bareResult.errors > 0) {
    bench.row(
      '7 API',
      'non-2xx / errors',
      `${listResult.non2xx + bareResult.non2xx} / ${listResult.errors + bareResult.errors}`,
      '0',
      false,
    );
  }
  bench.log(`  bare ${bareResult.perSec}/s, GET /webhooks ${listResult.perSec}/s (ratio ${ratio})`);
}

/**
 * One autocannon run and the CPU it took, added to `earlier` (the same route's other window).
 * With --profile each window's profile is summarised; the file of the route keeps the last one.
 */
async function apiWindow(bench: Bench, name: string, args: ApiLoadArgs, earlier?: CpuUse): Promise<{ result: ApiLoadResult; use: CpuUse }> {
  const cpu = await bench.cpuSnapshot();
  const result = await bench.registry.run<ApiLoadResult>('api-load', args);
  const use = await bench.cpuSince(name, cpu, result.cpuMs / 1000);
  if (earlier) bench.cpu[name] = addCpuUse(earlier, use);
  return { result, use };
}

/** Two windows of one route, equally long: requests/s and p50 averaged, the worse p99, counts added. */
function mergeApiLoads(a: ApiLoadResult, b: ApiLoadResult): ApiLoadResult {
  return {
    perSec: Math.round((a.perSec + b.perSec) / 2),
    requests: a.requests + b.requests,
    non2xx: a.non2xx + b.non2xx,
    errors: a.errors + b.errors,
    timeouts: a.timeouts + b.timeouts,
    latencyP50Ms: round((a.latencyP50Ms + b.latencyP50Ms) / 2, 1),
    latencyP99Ms: Math.max(a.latencyP99Ms, b.latencyP99Ms),
    cpuMs: a.cpuMs + b.cpuMs,
  };
}
