import type { Bench } from '../lib/bench';
import { STORE } from '../lib/config';
import { bulkPublish } from '../lib/db';
import { drainRates } from '../lib/drain';

/**
 * 9. One ordered endpoint that answers in 1 ms: deliveries go one at a time, each released by the
 * outcome of the one before, so the rate is one round of claim, request and record per delivery.
 */
export async function ordered(bench: Bench): Promise<void> {
  const events = bench.sizes.orderedEvents;
  const type = 'delivery.batch_started';
  bench.log(`9 ordered: ${events} events to one ordered endpoint answering in 1 ms, published in bulk (SQL)`);
  const endpoint = await bench.api<{ id: string }>('POST', '/webhooks', {
    name: 'bench ordered',
    url: bench.url(0, '/ok1ms/ord/0'),
    events: [type],
    ordered: true,
  });
  const cpu = await bench.cpuSnapshot();
  await bulkPublish(bench.db!.pool, {
    storeId: STORE,
    type,
    webhookIds: [endpoint.id],
    events,
    batchEvents: 200,
    notify: true,
    ordered: true,
  });
  const arrived = await bench.waitForArrivals('/ok1ms/ord/', events, 30_000);
  const durable = await bench.waitForStatus(type, 'succeeded', events, 60_000);
  const use = await bench.cpuSince('ordered', cpu);
  const { perSec, allDurable } = drainRates(arrived, durable, events);
  const { id } = await bench.arrivals('/ok1ms/ord/');
  const inOrder = id.every((eventId, i) => i === 0 || id[i - 1] < eventId);
  Object.assign(bench.results, {
    orderedPerSec: allDurable ? perSec : 0,
    orderedInOrder: inOrder,
    orderedDuplicates: arrived.count - arrived.unique,
    orderedHooklineCpuMsPerDelivery: Math.round((use.hooklineCpuS * 1000 * 1000) / events) / 1000,
  });
  bench.row('9 ordered', `deliveries/s to one ordered endpoint (${events})`, allDurable ? perSec : `${perSec} (NOT all durable)`);
  bench.row(
    '9 ordered',
    'arrived in event id order / duplicates',
    `${inOrder ? 'yes' : 'NO'} / ${arrived.count - arrived.unique}`,
    'yes / 0',
    inOrder && arrived.count === arrived.unique,
  );
  bench.log(`  ${perSec}/s, in order: ${inOrder}`);
}
