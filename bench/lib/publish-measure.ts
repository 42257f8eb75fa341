import { EVENT_CATALOGUE, EventType } from '../../src/catalogue/event-catalogue';
import type { PublisherArgs, PublisherResult } from '../publisher';
import type { Bench } from './bench';
import { ADMIN_KEY } from './config';
import { distribution } from './stats';

export interface PublishMeasurement {
  /** Publish → first arrival, per event and endpoint, after the warm-up. */
  latencies: number[];
  warmLatencies: number[];
  publish: PublisherResult;
  /** Deliveries of counted events that never arrived. */
  missing: number;
  /** How long each counted POST /events took to be answered. */
  apiMs: number[];
}

/** Publishes through POST /events at a fixed rate and returns publish→arrival times per endpoint. */
export async function publishAndMeasure(
  bench: Bench,
  name: string,
  type: EventType,
  prefix: string,
  endpoints: number,
  rate: number,
  warmupMs: number,
  durationMs: number,
): Promise<PublishMeasurement> {
  await bench.receiver!.call('clear');
  await bench.resetSqlStats();
  const cpu = await bench.cpuSnapshot();
  const args: PublisherArgs = {
    baseUrl: bench.hookline!.baseUrl,
    apiKey: ADMIN_KEY,
    type,
    data: EVENT_CATALOGUE[type].example,
    ratePerSec: rate,
    warmupMs,
    durationMs,
    connections: 32,
  };
  const publish = await bench.registry.run<PublisherResult>('publisher', args);
  const published = publish.ids.filter(Boolean).length;
  await bench.waitForArrivals(prefix, published * endpoints, 15_000);
  await bench.cpuSince(name, cpu, publish.cpuMs / 1000);
  await bench.collectSqlStats(name);
  const arrivals = await bench.arrivals(prefix);
  const first = new Map<string, number>();
  for (let i = 0; i < arrivals.id.length; i++) {
    const key = `${arrivals.ep[i]}|${arrivals.id[i]}`;
    const seen = first.get(key);
    if (seen === undefined || arrivals.at[i] < seen) first.set(key, arrivals.at[i]);
  }
  const endpointsSeen = [...new Set(arrivals.ep)];
  const latencies: number[] = [];
  const warmLatencies: number[] = [];
  const apiMs: number[] = [];
  // Latencies by second of the phase, to tell a steady tail from a few stalls.
  const bySecond = new Map<number, number[]>();
  // Counted from the end of the warm-up: its seconds (negative) are shown too, not counted.
  const startedAt = publish.sentAt.find((_, i) => !publish.warm[i]) ?? 0;
  let missing = 0;
  for (let i = 0; i < publish.ids.length; i++) {
    if (!publish.ids[i]) continue;
    if (!publish.warm[i]) apiMs.push(publish.answeredAt[i] - publish.sentAt[i]);
    for (const ep of endpointsSeen) {
      const at = first.get(`${ep}|${publish.ids[i]}`);
      if (at === undefined) {
        if (!publish.warm[i]) missing++;
        continue;
      }
      (publish.warm[i] ? warmLatencies : latencies).push(at - publish.sentAt[i]);
      const second = Math.floor((publish.sentAt[i] - startedAt) / 1000);
      if (!bySecond.has(second)) bySecond.set(second, []);
      bySecond.get(second)!.push(at - publish.sentAt[i]);
    }
  }
  if (endpointsSeen.length < endpoints) missing += (endpoints - endpointsSeen.length) * apiMs.length;
  const seconds = [...bySecond].map(([second, values]) => ({ second, ...distribution(values) }));
  const worst = seconds
    .filter((w) => w.second >= 0)
    .sort((a, b) => b.max - a.max)
    .slice(0, 3);
  bench.log(`  slowest seconds: ${worst.map((w) => `${w.second}: p50 ${w.p50} p99 ${w.p99} max ${w.max} ms`).join('; ')}`);
  if (bench.options.sqlStats && bench.hookline) {
    // What Hookline went through in those seconds: its event loop's worst delay, its slow statements.
    type Timeline = { slowSql: Array<[number, number, string]>; loopDelays: Array<[number, number, number]> };
    const timeline = await bench.hookline.child.call<Timeline>('timeline');
    for (const w of worst) {
      const from = startedAt + w.second * 1000 - 250;
      const to = from + 1500;
      const quarters = timeline.loopDelays.filter(([at]) => at >= from && at < to);
      const loop = quarters.map(([, ms]) => Math.round(ms));
      const waited = quarters.map(([, , ms]) => Math.round(ms));
      const sql = timeline.slowSql
        .filter(([at]) => at >= from && at < to)
        .map(([, ms, text]) => `${Math.round(ms)} ms ${text.slice(0, 18)}`);
      bench.log(
        `    second ${w.second}: event loop delay max per 250 ms [${loop.join(', ')}], main thread waiting for a CPU [${waited.join(', ')}] ms; statements ≥ 10 ms: ${sql.length} ${sql.slice(0, 6).join(', ')}`,
      );
    }
  }
  bench.results[`${name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}BySecond`] = seconds.map((w) => [
    w.second,
    w.p50,
    w.p99,
    w.max,
  ]);
  return { latencies, warmLatencies, publish, missing, apiMs };
}
