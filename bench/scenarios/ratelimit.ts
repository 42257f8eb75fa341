import type { EventType } from '../../src/catalogue/event-catalogue';
import type { Bench } from '../lib/bench';
import { ENDPOINTS, RATE_LIMIT_PER_SECOND, STORE } from '../lib/config';
import { bulkPublish } from '../lib/db';
import { round } from '../lib/stats';

/** Distinct deliveries per second from the first to the last arrival under `prefix`. */
async function drain(bench: Bench, type: EventType, webhookIds: string[], prefix: string, expected: number): Promise<number> {
  await bulkPublish(bench.db!.pool, {
    storeId: STORE,
    type,
    webhookIds,
    events: bench.sizes.rateLimitEvents,
    batchEvents: 200,
    notify: true,
  });
  const arrived = await bench.waitForArrivals(prefix, expected, 30_000);
  if (arrived.unique < expected) throw new Error(`only ${arrived.unique} of ${expected} deliveries arrived at ${prefix}`);
  return Math.round(arrived.unique / ((arrived.last - arrived.first) / 1000));
}

/**
 * 8. A rate-limited endpoint does not slow the others: the same bulk publish to nine endpoints,
 * once alone and once with a tenth endpoint limited to RATE_LIMIT_PER_SECOND subscribed too. The
 * nine's throughput is compared; the limited endpoint's busiest second is counted.
 */
export async function rateLimit(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const others = ENDPOINTS - 1;
  const total = s.rateLimitEvents * others;
  bench.log(
    `8 ratelimit: ${s.rateLimitEvents} events × ${others} endpoints, alone and beside one limited to ${RATE_LIMIT_PER_SECOND}/s, published in bulk (SQL)`,
  );
  // A first round, not measured, so that neither measured round runs on code still being compiled.
  const warm = await bench.createWebhooks(
    'order.status_changed',
    bench.ports.slice(0, others).map((_, i) => bench.url(i, `/ok/rlw/${i}`)),
  );
  await drain(bench, 'order.status_changed', warm, '/ok/rlw/', total);
  const alone = await bench.createWebhooks(
    'payment.refunded',
    bench.ports.slice(0, others).map((_, i) => bench.url(i, `/ok/rla/${i}`)),
  );
  const withoutPerSec = await drain(bench, 'payment.refunded', alone, '/ok/rla/', total);

  const beside = await bench.createWebhooks(
    'stock.low',
    bench.ports.slice(0, others).map((_, i) => bench.url(i, `/ok/rlb/${i}`)),
  );
  const limited = await bench.api<{ id: string }>('POST', '/webhooks', {
    name: 'bench limited',
    url: bench.url(others, '/ok/rll/0'),
    events: ['stock.low'],
    rateLimitPerSecond: RATE_LIMIT_PER_SECOND,
  });
  const withPerSec = await drain(bench, 'stock.low', [...beside, limited.id], '/ok/rlb/', total);
  const sent = await bench.arrivals('/ok/rll/');
  // The limit counts attempts as they start; arrivals can bunch up behind a busy CPU.
  const [{ started }] = (
    await bench.db!.pool.query<{ started: number }>(
      `SELECT coalesce(max(n), 0)::int AS started FROM (
         SELECT count(*) AS n FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
         WHERE d.webhook_id = $1 GROUP BY date_trunc('second', a.started_at)) c`,
      [limited.id],
    )
  ).rows;
  // Its waiting deliveries end with it, so that they do not run into the next scenarios.
  await bench.api('PUT', `/webhooks/${limited.id}`, { isActive: false });

  const times = [...sent.at].sort((a, b) => a - b);
  let busiest = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (j < times.length && times[j] - times[i] < 1_000) j++;
    busiest = Math.max(busiest, j - i);
  }
  const ratio = round(withPerSec / withoutPerSec, 2);
  Object.assign(bench.results, {
    rateLimitOthersAlonePerSec: withoutPerSec,
    rateLimitOthersBesidePerSec: withPerSec,
    rateLimitOthersRatio: ratio,
    rateLimitLimitedSent: times.length,
    rateLimitLimitedBusiestSecond: busiest,
    rateLimitLimitedMostStartedInASecond: started,
  });
  bench.row('8 ratelimit', `9 endpoints' deliveries/s alone (${total})`, withoutPerSec);
  bench.row('8 ratelimit', `… beside one limited to ${RATE_LIMIT_PER_SECOND}/s`, withPerSec);
  bench.row('8 ratelimit', 'beside / alone', ratio, '≥ 0.8', ratio >= 0.8);
  bench.row('8 ratelimit', 'limited endpoint: attempts meanwhile / busiest 1 s of arrivals', `${times.length} / ${busiest}`);
  bench.row(
    '8 ratelimit',
    'limited endpoint: most attempts started in one second',
    started,
    `≤ ${RATE_LIMIT_PER_SECOND}`,
    started <= RATE_LIMIT_PER_SECOND,
  );
  bench.log(
    `  others ${withoutPerSec}/s alone, ${withPerSec}/s beside the limited one (×${ratio}); limited: busiest second of arrivals ${busiest}, most started in a second ${started}`,
  );
}
