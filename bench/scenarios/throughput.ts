import type { EventType } from '../../src/catalogue/event-catalogue';
import type { Bench } from '../lib/bench';
import { ENDPOINTS } from '../lib/config';
import { BATCH_EVENTS, batchPublish, publishToEndpoints } from '../lib/batch-publish';
import { attemptOutcomes } from '../lib/db';
import { awaitDrain, drainRates } from '../lib/drain';
import { formatCounts } from '../lib/report';
import { round } from '../lib/stats';

/** Subscribed to by no endpoint of any scenario. */
const WARM_UP_TYPE: EventType = 'stock.updated';

/**
 * 2. Events published in batches of 1,000 (POST /events/batch) to 10 endpoints while Hookline
 * delivers them: how fast they are enqueued, then arrivals and durability.
 */

export async function throughput(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const type: EventType = 'order.created';
  const total = s.throughputEvents * ENDPOINTS;
  bench.log(
    `2 throughput: ${s.throughputEvents} events × ${ENDPOINTS} endpoints = ${total} deliveries, published through POST /events/batch`,
  );
  await bench.createWebhooks(
    type,
    bench.ports.map((_, i) => bench.url(i, `/ok/thr/${i}`)),
  );
  // A fresh process runs its first batch cold (compiling, planning): two batches of a type no
  // endpoint subscribes to come first, uncounted, so the figure is the steady rate.
  await batchPublish({
    baseUrl: bench.hookline!.baseUrl,
    type: WARM_UP_TYPE,
    events: 2 * BATCH_EVENTS,
    batchEvents: BATCH_EVENTS,
    inFlight: 1,
  });
  await bench.receiver!.call('clear');
  await bench.resetSqlStats();
  const cpu = await bench.cpuSnapshot();
  const published = await publishToEndpoints(bench.hookline!.baseUrl, type, s.throughputEvents);
  const publishPerSec = Math.round((published.deliveries / published.ms) * 1000);
  bench.log(`  published ${published.deliveries} deliveries in ${published.requests} requests in ${published.ms} ms: ${publishPerSec}/s`);
  const { arrived, durable } = await awaitDrain(bench, '/ok/thr/', type, total);
  const use = await bench.cpuSince('throughput', cpu);
  await bench.collectSqlStats('throughput');
  const attempts = await attemptOutcomes(bench.db!.pool, type);
  const { spanMs, perSec, allDurable, durablePerSec } = drainRates(arrived, durable, total);
  Object.assign(bench.results, {
    throughputPerSec: allDurable ? perSec : 0,
    throughputArrivalPerSec: perSec,
    throughputDurablePerSec: durablePerSec,
    throughputDeliveries: total,
    throughputAttempts: attempts,
    throughputArrived: arrived.unique,
    throughputDuplicates: arrived.count - arrived.unique,
    throughputSucceededInDb: durable.counts.succeeded ?? 0,
    throughputSpanMs: Math.round(spanMs),
    throughputPublishMs: published.ms,
    publishDeliveriesPerSec: publishPerSec,
    throughputDurableLagMs: Math.round(durable.at - arrived.last),
    throughputHooklineCpuMsPerDelivery: round((use.hooklineCpuS * 1000) / total, 3),
    throughputPostgresCpuMsPerDelivery: round((use.postgresCpuS * 1000) / total, 3),
  });
  bench.row(
    '2 throughput',
    `deliveries enqueued/s by POST /events/batch (${BATCH_EVENTS} events a request, 2 in flight, while delivering)`,
    publishPerSec,
  );
  bench.row('2 throughput', `deliveries/s, first → last arrival (${total})`, allDurable ? perSec : `${perSec} (NOT all durable)`);
  bench.ratioRow('2 throughput', 'throughputRatio', perSec, allDurable);
  bench.row(
    '2 throughput',
    'all succeeded in the DB / duplicates',
    `${durable.counts.succeeded ?? 0} of ${total} / ${arrived.count - arrived.unique}`,
  );
  bench.row('2 throughput', 'deliveries/s until all durable', durablePerSec);
  bench.row('2 throughput', 'attempts by outcome', formatCounts(attempts));
  bench.row(
    '2 throughput',
    'CPU ms per delivery: Hookline / PostgreSQL',
    `${round((use.hooklineCpuS * 1000) / total, 3)} / ${round((use.postgresCpuS * 1000) / total, 3)}`,
  );
  bench.log(`  ${perSec}/s first→last arrival over ${Math.round(spanMs)} ms; DB: ${JSON.stringify(durable.counts)}`);
}
