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
 * 8. A rate-limited endpoint does not slow the others: the same bulk publish to ten endpoints,
 * first with the tenth unlimited, then with it limited to RATE_LIMIT_PER_SECOND, then unlimited
 * again; the nine others' throughput with the limited tenth is compared with the mean of the two
 * rounds without. The limited endpoint's attempts per second are counted.
 */
export async function rateLimit(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const others = ENDPOINTS - 1;
  const total = s.rateLimitEvents * others;
  bench.log(
    `8 ratelimit: ${s.rateLimitEvents} events × ${ENDPOINTS} endpoints, the nine others' throughput with the tenth unlimited and limited to ${RATE_LIMIT_PER_SECOND}/s, published in bulk (SQL)`,
  );
  /** Nine endpoints under `/ok/<key>/` and a tenth (limited or not) at `/ok/<key>x/`: the nine's deliveries/s. */
  const measure = async (type: EventType, key: string, limit: number | null): Promise<{ perSec: number; tenth: string }> => {
    const nine = await bench.createWebhooks(
      type,
      bench.ports.slice(0, others).map((_, i) => bench.url(i, `/ok/${key}/${i}`)),
    );
    const tenth = await bench.api<{ id: string }>('POST', '/webhooks', {
      name: `bench tenth ${key}`,
      url: bench.url(others, `/ok/${key}x/0`),
      events: [type],
      rateLimitPerSecond: limit,
    });
    return { perSec: await drain(bench, type, [...nine, tenth.id], `/ok/${key}/`, total), tenth: tenth.id };
  };
  // A first round, not measured, so that no measured round runs on code still being compiled.
  await measure('order.status_changed', 'rlw', null);
  const { perSec: withoutPerSec } = await measure('payment.refunded', 'rla', null);
  const { perSec: withPerSec, tenth: limitedId } = await measure('stock.low', 'rlb', RATE_LIMIT_PER_SECOND);
  const sent = await bench.arrivals('/ok/rlbx/');
  // Without a limit once more, the limited endpoint's backlog still waiting, so that a table grown
  // by the earlier rounds weighs on both sides alike: the ratio is to the mean of the two rounds.
  const { perSec: afterPerSec } = await measure('product.deleted', 'rlc', null);
  // The limit counts attempts as they start; arrivals can bunch up behind a busy CPU.
  const [{ started }] = (
    await bench.db!.pool.query<{ started: number }>(
      `SELECT coalesce(max(n), 0)::int AS started FROM (
         SELECT count(*) AS n FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
         WHERE d.webhook_id = $1 GROUP BY date_trunc('second', a.started_at)) c`,
      [limitedId],
    )
  ).rows;
  // Its waiting deliveries end with it, so that they do not run into the next scenarios.
  await bench.api('PUT', `/webhooks/${limitedId}`, { isActive: false });

  const times = [...sent.at].sort((a, b) => a - b);
  let busiest = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (j < times.length && times[j] - times[i] < 1_000) j++;
    busiest = Math.max(busiest, j - i);
  }
  const aloneMeanPerSec = Math.round((withoutPerSec + afterPerSec) / 2);
  const ratio = round(withPerSec / aloneMeanPerSec, 2);
  Object.assign(bench.results, {
    rateLimitOthersPerSec: aloneMeanPerSec,
    rateLimitOthersRoundsPerSec: [withoutPerSec, afterPerSec],
    rateLimitOthersLimitedTenthPerSec: withPerSec,
    rateLimitOthersRatio: ratio,
    rateLimitLimitedSent: times.length,
    rateLimitLimitedBusiestSecond: busiest,
    rateLimitLimitedMostStartedInASecond: started,
  });
  bench.row(
    '8 ratelimit',
    `9 endpoints' deliveries/s, the tenth unlimited: before / after (${total})`,
    `${withoutPerSec} / ${afterPerSec}`,
  );
  bench.row('8 ratelimit', `… the tenth limited to ${RATE_LIMIT_PER_SECOND}/s`, withPerSec);
  bench.row('8 ratelimit', 'limited / mean unlimited', ratio, '≥ 0.8', ratio >= 0.8);
  bench.row('8 ratelimit', 'limited endpoint: attempts meanwhile / busiest 1 s of arrivals', `${times.length} / ${busiest}`);
  bench.row(
    '8 ratelimit',
    'limited endpoint: most attempts started in one second',
    started,
    `≤ ${RATE_LIMIT_PER_SECOND}`,
    started <= RATE_LIMIT_PER_SECOND,
  );
  bench.log(
    `  nine others ${withoutPerSec}/s and ${afterPerSec}/s beside an unlimited tenth, ${withPerSec}/s beside a limited one (×${ratio}); limited: busiest second of arrivals ${busiest}, most started in a second ${started}`,
  );
}
