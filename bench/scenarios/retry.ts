import { EVENT_CATALOGUE, EventType } from '../../src/catalogue/event-catalogue';
import type { PublisherArgs, PublisherResult } from '../publisher';
import type { Bench } from '../lib/bench';
import { ADMIN_KEY, DELIVERY_TIMEOUT_MS, RETRY_SCHEDULE_MS } from '../lib/config';
import { max, mean, min, percentile, round } from '../lib/stats';

/** 4. Endpoints answering 500: the gaps between attempts 1→2 and 2→3 at the receiver. */
export async function retry(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const type: EventType = 'payment.received';
  bench.log(
    `4 retry timing: ${s.retryEvents} events × ${s.retryEndpoints} endpoints answering 500, schedule ${RETRY_SCHEDULE_MS.join(',')} ms`,
  );
  await bench.createWebhooks(
    type,
    Array.from({ length: s.retryEndpoints }, (_, i) => bench.url(i, `/fail/retry/${i}`)),
  );
  await bench.receiver!.call('clear');
  const cpu = await bench.cpuSnapshot();
  const publish = await bench.registry.run<PublisherResult>('publisher', {
    baseUrl: bench.hookline!.baseUrl,
    apiKey: ADMIN_KEY,
    type,
    data: EVENT_CATALOGUE[type].example,
    ratePerSec: s.retryRate,
    warmupMs: 0,
    durationMs: (s.retryEvents / s.retryRate) * 1000,
    connections: 16,
  } satisfies PublisherArgs);
  const deliveries = publish.ids.filter(Boolean).length * s.retryEndpoints;
  // The receiver first, then the database: counting statuses scans the whole deliveries table, and
  // polling it every 100 ms while the retries run would take CPU from the processes being timed.
  await bench.waitForArrivals('/fail/retry/', deliveries * RETRY_SCHEDULE_MS.length, 4 * DELIVERY_TIMEOUT_MS + 5000, 'attempts');
  const failed = await bench.waitForStatus(type, 'failed', deliveries, 4 * DELIVERY_TIMEOUT_MS + 5000 + 20_000);
  await bench.cpuSince('retry', cpu, publish.cpuMs / 1000);
  const arrivals = await bench.arrivals('/fail/retry/');
  const byDelivery = new Map<string, number[]>();
  for (let i = 0; i < arrivals.id.length; i++) {
    const key = `${arrivals.ep[i]}|${arrivals.id[i]}`;
    const list = byDelivery.get(key) ?? [];
    list.push(arrivals.at[i]);
    byDelivery.set(key, list);
  }
  const gap1: number[] = [];
  const gap2: number[] = [];
  let wrongAttemptCount = 0;
  const outOfRange: string[] = [];
  const inRange = (value: number, target: number): boolean => Math.abs(value - target) <= target * 0.15;
  for (const [key, times] of byDelivery) {
    times.sort((a, b) => a - b);
    if (times.length !== RETRY_SCHEDULE_MS.length) wrongAttemptCount++;
    // The gaps 1→2 and 2→3, each against its own delay.
    const gaps = times.slice(1, 3).map((at, i) => at - times[i]);
    if (gaps.length >= 1) gap1.push(gaps[0]);
    if (gaps.length >= 2) gap2.push(gaps[1]);
    if (gaps.some((gap, i) => !inRange(gap, RETRY_SCHEDULE_MS[i + 1]))) outOfRange.push(key);
  }
  const within = (values: number[], target: number): boolean => values.length > 0 && values.every((v) => inRange(v, target));
  await explainRetryGaps(bench, outOfRange.slice(0, 5), byDelivery, publish.sentAt[0] ?? 0);
  Object.assign(bench.results, {
    retryGap1Ms: round(mean(gap1), 1),
    retryGap1MinMs: round(min(gap1), 1),
    retryGap1MaxMs: round(max(gap1), 1),
    retryGap1P99Ms: round(percentile(gap1, 99), 1),
    retryGap2Ms: round(mean(gap2), 1),
    retryGap2MinMs: round(min(gap2), 1),
    retryGap2MaxMs: round(max(gap2), 1),
    retryGap2P99Ms: round(percentile(gap2, 99), 1),
    retryDeliveries: byDelivery.size,
    retryExpectedDeliveries: deliveries,
    retryWrongAttemptCount: wrongAttemptCount,
    retryFailedInDb: failed.counts.failed ?? 0,
  });
  const ok1 = within(gap1, RETRY_SCHEDULE_MS[1]);
  const ok2 = within(gap2, RETRY_SCHEDULE_MS[2]);
  bench.row(
    '4 retry',
    `gap 1→2 mean / min / max (${gap1.length})`,
    `${round(mean(gap1), 1)} / ${round(min(gap1), 1)} / ${round(max(gap1), 1)} ms`,
    '1000 ± 15 %',
    ok1,
  );
  bench.row(
    '4 retry',
    `gap 2→3 mean / min / max (${gap2.length})`,
    `${round(mean(gap2), 1)} / ${round(min(gap2), 1)} / ${round(max(gap2), 1)} ms`,
    '4000 ± 15 %',
    ok2,
  );
  bench.row(
    '4 retry',
    'deliveries failed in DB / with ≠ 3 attempts',
    `${failed.counts.failed ?? 0} of ${deliveries} / ${wrongAttemptCount}`,
    `${deliveries} / 0`,
    (failed.counts.failed ?? 0) === deliveries && wrongAttemptCount === 0 && byDelivery.size === deliveries,
  );
  bench.log(
    `  gap1 mean ${round(mean(gap1), 1)} [${round(min(gap1), 1)}, ${round(max(gap1), 1)}] ms, gap2 mean ${round(mean(gap2), 1)} [${round(min(gap2), 1)}, ${round(max(gap2), 1)}] ms`,
  );
}

/**
 * For retry gaps out of range: when each attempt of the delivery started according to the
 * database, next to when it arrived. A late start means a late claim; a late arrival, a slow send.
 */
async function explainRetryGaps(bench: Bench, keys: string[], arrivals: Map<string, number[]>, phaseStart: number): Promise<void> {
  const explained: Array<Record<string, unknown>> = [];
  for (const key of keys) {
    const [endpoint, eventId] = key.split('|');
    const { rows } = await bench.db!.pool.query<{ id: string; number: number; started: number }>(
      `SELECT d.id, a.number, extract(epoch FROM a.started_at) * 1000 AS started
       FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN delivery_attempts a ON a.delivery_id = d.id
       WHERE d.event_id = $1 AND w.url = $2 ORDER BY a.number`,
      [eventId, bench.url(Number(endpoint), `/fail/retry/${endpoint}`)],
    );
    const times = arrivals.get(key) ?? [];
    const first = times[0] ?? 0;
    const entry = {
      delivery: rows[0]?.id,
      atPhaseMs: Math.round(first - phaseStart),
      arrivedMs: times.map((t) => Math.round(t - first)),
      startedMs: rows.map((row) => Math.round(Number(row.started) - first)),
    };
    explained.push(entry);
    bench.log(
      `  ! retry gap out of range: ${entry.delivery} (endpoint ${endpoint}), ${entry.atPhaseMs} ms into the phase: arrived at +${entry.arrivedMs.join(', +')} ms, attempts started (DB) at +${entry.startedMs.join(', +')} ms`,
    );
  }
  if (explained.length > 0) bench.results.retryOutOfRange = explained;
}
