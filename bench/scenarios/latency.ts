import type { Bench } from '../lib/bench';
import { publishAndMeasure } from '../lib/publish-measure';
import { settle } from '../lib/settle';
import { distribution } from '../lib/stats';

/** 3. Publish→arrival at a fixed rate (POST /events) to one endpoint. */
export async function latency(bench: Bench): Promise<void> {
  const s = bench.sizes;
  bench.log(
    `3 latency: POST /events at ${s.latencyRate}/s for ${(s.latencyWarmupMs + s.latencyMs) / 1000} s (first ${s.latencyWarmupMs / 1000} s not counted) to 1 endpoint`,
  );
  await bench.createWebhooks('order.updated', [bench.url(0, '/ok/lat/0')]);
  await settle(bench);
  // A fresh process answers its first POST /events slowly while V8 compiles the request pipeline;
  // stepping from 0 to 500/s would queue behind that, so a ramp at 100/s comes first, not counted.
  bench.log(`  ramp: 100/s for ${s.latencyRampMs / 1000} s (not counted)`);
  const ramp = await publishAndMeasure(bench, 'latency-ramp', 'order.updated', '/ok/lat/', 1, 100, 0, s.latencyRampMs);
  const { latencies, warmLatencies, publish, missing, apiMs } = await publishAndMeasure(
    bench,
    'latency',
    'order.updated',
    '/ok/lat/',
    1,
    s.latencyRate,
    s.latencyWarmupMs,
    s.latencyMs,
  );
  const rampD = distribution(ramp.latencies);
  const warmD = distribution(warmLatencies);
  Object.assign(bench.results, { latencyRampP99Ms: rampD.p99, latencyWarmupP99Ms: warmD.p99 });
  const d = distribution(latencies);
  const api = distribution(apiMs);
  Object.assign(bench.results, {
    latencyP50Ms: d.p50,
    latencyP95Ms: d.p95,
    latencyP99Ms: d.p99,
    latencyMaxMs: d.max,
    latencyMeanMs: d.mean,
    latencyEvents: d.count,
    latencyMissing: missing,
    latencyPublishErrors: publish.errors,
    latencyAchievedRatePerSec: publish.achievedPerSec,
    publishApiP50Ms: api.p50,
    publishApiP99Ms: api.p99,
  });
  bench.row(
    '3 latency',
    `publish → arrival p50 / p95 / p99 / max (${d.count} events at ${publish.achievedPerSec}/s)`,
    `${d.p50} / ${d.p95} / ${d.p99} / ${d.max} ms`,
    'p99 ≤ 25 ms',
    d.p99 <= 25 && missing === 0,
  );
  bench.row('3 latency', 'POST /events answered p50 / p99', `${api.p50} / ${api.p99} ms`);
  bench.row(
    '3 latency',
    `not counted: p99 of the ramp at 100/s / of the first ${s.latencyWarmupMs / 1000} s at ${s.latencyRate}/s`,
    `${rampD.p99} / ${warmD.p99} ms`,
  );
  if (missing || publish.errors)
    bench.row('3 latency', 'missing deliveries / publish errors', `${missing} / ${publish.errors}`, '0', false);
  bench.log(`  p50 ${d.p50} p95 ${d.p95} p99 ${d.p99} max ${d.max} ms; POST /events p50 ${api.p50} p99 ${api.p99} ms; missing ${missing}`);
  if (bench.options.quick) return;
  // For diagnosis: the same path well below saturation, so that queueing and path latency can be told apart.
  const lowRate = 100;
  bench.log(`3b latency at ${lowRate}/s (same endpoint), for comparison`);
  await settle(bench);
  const low = await publishAndMeasure(bench, 'latency-100', 'order.updated', '/ok/lat/', 1, lowRate, s.latencyWarmupMs, s.latencyMs / 2);
  const l = distribution(low.latencies);
  Object.assign(bench.results, { latencyAt100P50Ms: l.p50, latencyAt100P99Ms: l.p99, latencyAt100MaxMs: l.max });
  bench.row(
    '3 latency',
    `for comparison, at ${lowRate}/s: p50 / p95 / p99 / max (${l.count})`,
    `${l.p50} / ${l.p95} / ${l.p99} / ${l.max} ms`,
  );
  bench.log(`  at ${lowRate}/s: p50 ${l.p50} p99 ${l.p99} max ${l.max} ms`);
}
