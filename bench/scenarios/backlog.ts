import type { EventType } from '../../src/catalogue/event-catalogue';
import type { Bench } from '../lib/bench';
import { ENDPOINTS, STORE } from '../lib/config';
import { attemptOutcomes, bulkPublish } from '../lib/db';
import { drainRates } from '../lib/drain';
import { processMemoryMb, RssSampler } from '../lib/proc';
import { formatCounts } from '../lib/report';
import { round } from '../lib/stats';
import { ceiling } from './ceiling';

/** 6. A backlog inserted while no worker runs, drained by one fresh process. */
export async function backlog(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const type: EventType = 'customer.created';
  const total = s.backlogEvents * ENDPOINTS;
  bench.log(
    `6 backlog: ${total} pending deliveries (${s.backlogEvents} events × ${ENDPOINTS} endpoints) inserted directly, drained by one fresh Hookline`,
  );
  const webhookIds = await bench.createWebhooks(
    type,
    bench.ports.map((_, i) => bench.url(i, `/ok/backlog/${i}`)),
  );
  await bench.stopHookline();
  // The machine's ceiling again, now (other load on a shared machine varies); the highest run counts.
  if (bench.has('ceiling')) await ceiling(bench, 'ceiling-again');
  const published = await bulkPublish(bench.db!.pool, {
    storeId: STORE,
    type,
    webhookIds,
    events: s.backlogEvents,
    batchEvents: 2000,
    notify: false,
  });
  bench.log(`  inserted ${published.deliveries} pending deliveries in ${published.ms} ms`);
  await bench.db!.pool.query('VACUUM ANALYZE delivery_queue');
  await bench.receiver!.call('clear');
  const cpu = await bench.cpuSnapshot();
  const startedAt = Date.now();
  // Sampled from the moment the process exists: it starts draining before it listens.
  let sampler: RssSampler | undefined;
  const hookline = await bench.startHookline('backlog', (child) => {
    sampler = new RssSampler(child.pid);
    sampler.start(100);
  });
  const readyMs = Date.now() - startedAt;
  await bench.profileStart();
  const heap = { heapUsedMb: 0, heapTotalMb: 0, externalMb: 0, arrayBuffersMb: 0 };
  const heapTimer = setInterval(() => {
    void hookline.child
      .call<NodeJS.MemoryUsage>('memory')
      .then((m) => {
        heap.heapUsedMb = Math.max(heap.heapUsedMb, round(m.heapUsed / 2 ** 20, 1));
        heap.heapTotalMb = Math.max(heap.heapTotalMb, round(m.heapTotal / 2 ** 20, 1));
        heap.externalMb = Math.max(heap.externalMb, round(m.external / 2 ** 20, 1));
        heap.arrayBuffersMb = Math.max(heap.arrayBuffersMb, round(m.arrayBuffers / 2 ** 20, 1));
      })
      .catch(() => undefined);
  }, 500);
  const arrived = await bench.waitForArrivals('/ok/backlog/', total, 30_000);
  const durable = await bench.waitForStatus(type, 'succeeded', total, 120_000);
  const memory = processMemoryMb(hookline.child.pid);
  sampler!.stop();
  clearInterval(heapTimer);
  // What is still alive once the work is done (a full collection): a leak, or a lazily collected heap?
  const afterGc = await hookline.child.call<NodeJS.MemoryUsage>('gcMemory');
  const heapAfterGcMb = round(afterGc.heapUsed / 2 ** 20, 1);
  const use = await bench.cpuSince('backlog', cpu);
  await bench.collectSqlStats('backlog');
  const attempts = await attemptOutcomes(bench.db!.pool, type);
  const peakRssMb = round(Math.max(memory?.peakRssMb ?? 0, sampler!.peakMb), 1);
  const { spanMs, perSec, allDurable, durablePerSec } = drainRates(arrived, durable, total);
  Object.assign(bench.results, {
    backlogPerSec: allDurable ? perSec : 0,
    backlogDurablePerSec: durablePerSec,
    backlogDeliveries: total,
    backlogAttempts: attempts,
    backlogArrived: arrived.unique,
    backlogDuplicates: arrived.count - arrived.unique,
    backlogSucceededInDb: durable.counts.succeeded ?? 0,
    backlogSpanMs: Math.round(spanMs),
    backlogPeakRssMb: peakRssMb,
    backlogRssAfterMb: round(memory?.rssMb ?? Number.NaN, 1),
    backlogPeakHeap: heap,
    backlogHeapAfterGcMb: heapAfterGcMb,
    backlogStartToReadyMs: readyMs,
    backlogHooklineCpuMsPerDelivery: round((use.hooklineCpuS * 1000) / total, 3),
    backlogPostgresCpuMsPerDelivery: round((use.postgresCpuS * 1000) / total, 3),
  });
  bench.row('6 backlog', `deliveries/s draining ${total}`, allDurable ? perSec : `${perSec} (NOT all durable)`);
  bench.ratioRow('6 backlog', 'backlogRatio', perSec, allDurable);
  bench.row('6 backlog', 'peak RSS of the Hookline process (VmHWM)', `${peakRssMb} MB`, '< 300 MB', peakRssMb < 300);
  bench.row(
    '6 backlog',
    'peak V8 heap used / total, external (sampled every 0.5 s); heap used after a full GC at the end',
    `${heap.heapUsedMb} / ${heap.heapTotalMb}, ${heap.externalMb}; ${heapAfterGcMb} MB`,
  );
  bench.row(
    '6 backlog',
    'all succeeded in the DB / duplicates',
    `${durable.counts.succeeded ?? 0} of ${total} / ${arrived.count - arrived.unique}`,
  );
  bench.row('6 backlog', 'attempts by outcome', formatCounts(attempts));
  bench.row(
    '6 backlog',
    'CPU ms per delivery: Hookline / PostgreSQL',
    `${round((use.hooklineCpuS * 1000) / total, 3)} / ${round((use.postgresCpuS * 1000) / total, 3)}`,
  );
  bench.log(`  ${perSec}/s over ${Math.round(spanMs)} ms, peak RSS ${peakRssMb} MB; DB: ${JSON.stringify(durable.counts)}`);
  await bench.stopHookline();
}
