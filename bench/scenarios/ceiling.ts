import type { LoadHttpArgs, LoadHttpResult } from '../load-http';
import type { Bench } from '../lib/bench';
import { DELIVERY_TIMEOUT_MS, DISPATCH_CONCURRENCY, ENDPOINT_CONCURRENCY, ENDPOINTS } from '../lib/config';
import { round } from '../lib/stats';

export type CeilingLabel = 'ceiling' | 'ceiling-again' | 'ceiling-dispatch';

/**
 * 1. The same receiver driven by undici directly: signed requests, same concurrency, no database.
 * The ceiling is undici's `request`; `dispatch`, the lower-level API Hookline's sender uses and
 * which costs less per request, is measured once more for comparison.
 */
export async function ceiling(bench: Bench, label: CeilingLabel = 'ceiling'): Promise<void> {
  const s = bench.sizes;
  const client = label === 'ceiling-dispatch' ? 'undici-dispatch' : 'undici';
  bench.log(
    `1 ${label}: ${client} straight at the receiver, ${DISPATCH_CONCURRENCY} in flight over ${ENDPOINTS} endpoints, ${ENDPOINT_CONCURRENCY} sockets each, ${s.ceilingMs} ms`,
  );
  await bench.receiver!.call('clear');
  const cpu = await bench.cpuSnapshot();
  const args: LoadHttpArgs = {
    client,
    urls: bench.ports.map((_, i) => bench.url(i, `/ok/ceiling/${i}`)),
    concurrency: DISPATCH_CONCURRENCY,
    connectionsPerOrigin: ENDPOINT_CONCURRENCY,
    warmupMs: s.ceilingWarmupMs,
    durationMs: s.ceilingMs,
    timeoutMs: DELIVERY_TIMEOUT_MS,
  };
  const result = await bench.registry.run<LoadHttpResult>('load-http', args);
  const use = await bench.cpuSince(label, cpu, result.totalCpuMs / 1000);
  await bench.receiver!.call('clear');
  bench.log(`  ${label} ${result.perSec}/s (${result.failures} failures); receiver CPU ${use.receiverCpuS} s`);
  if (label === 'ceiling-dispatch') {
    Object.assign(bench.results, { ceilingDispatchPerSec: result.perSec, ceilingDispatchClientCpuUsPerRequest: result.cpuUsPerRequest });
    bench.row(
      '1 ceiling',
      "for comparison: deliveries/s through undici's dispatch (Hookline's API), client CPU per request",
      `${result.perSec}, ${result.cpuUsPerRequest} µs`,
    );
    return;
  }
  // Measured again before the backlog, since other load on a shared machine varies: the highest counts.
  const runs = [...((bench.results.ceilingRunsPerSec as number[] | undefined) ?? []), result.perSec];
  Object.assign(bench.results, {
    ceilingPerSec: Math.max(...runs),
    ceilingRunsPerSec: runs,
    ceilingFailures: ((bench.results.ceilingFailures as number | undefined) ?? 0) + result.failures,
    ceilingClientCpuUsPerRequest: result.cpuUsPerRequest,
  });
  bench.row(
    '1 ceiling',
    `deliveries/s (undici → receiver, no DB)${label === 'ceiling' ? '' : `, again before the backlog`}`,
    result.perSec,
  );
  if (label === 'ceiling') bench.row('1 ceiling', 'client CPU per request', `${result.cpuUsPerRequest} µs`);
}

/** Ratios to the ceiling, once every ceiling measurement is known (the highest one counts). */
export function finishRatios(bench: Bench): void {
  const ceilingPerSec = bench.results.ceilingPerSec as number | undefined;
  const dispatchCeiling = bench.results.ceilingDispatchPerSec as number | undefined;
  for (const { row, dispatchRow, perSec, allDurable, key } of bench.ratioRows) {
    const ratio = ceilingPerSec ? round(perSec / ceilingPerSec, 3) : Number.NaN;
    bench.results[key] = ratio;
    row.value = ceilingPerSec ? String(ratio) : 'n/a (no ceiling run)';
    row.pass = ceilingPerSec ? ratio >= 0.5 && allDurable : undefined;
    if (dispatchCeiling) bench.results[`${key}ToDispatch`] = round(perSec / dispatchCeiling, 3);
    dispatchRow.value = dispatchCeiling ? String(round(perSec / dispatchCeiling, 3)) : 'n/a (no ceiling run)';
  }
}
