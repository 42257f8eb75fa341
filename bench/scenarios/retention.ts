import type { EventType } from '../../src/catalogue/event-catalogue';
import { PartitionMaintenance } from '../../src/dispatch/retention/partition-maintenance';
import { DAY_MS, dayOf } from '../../src/dispatch/retention/partition-plan';
import type { Bench } from '../lib/bench';
import { measureClaim } from '../lib/claim';
import { STORE } from '../lib/config';
import { bulkPublish } from '../lib/db';
import { drainRates } from '../lib/drain';
import { fillDays } from '../lib/fill-days';
import { round } from '../lib/stats';

/** Days of finished deliveries filled in; the oldest is the one dropped. */
const FILLED_DAYS = 4;

/**
 * 9. Retention. (a) The claim with 0 and with `retentionRows` finished deliveries spread over
 * daily partitions. (b) `retentionRows` finished deliveries over the four past days in Hookline's
 * database, then deliveries at full speed twice: once alone, once while the oldest day is dropped
 * as RETENTION_DAYS=3 would drop it (PartitionMaintenance, the service's own code).
 */
export async function retention(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const rows = s.retentionRows;
  bench.log(
    `9 retention: ${rows} finished deliveries over ${FILLED_DAYS} days; ${s.retentionEvents} events × 10 endpoints delivered alone and during the drop of the oldest day`,
  );

  const claim = await measureClaim(
    bench.serverUrl!,
    { pending: s.claimPending, finished: rows, runs: s.claimRuns, batch: 500 },
    (line) => bench.log(line),
    (db) => bench.extraDatabases.push(db),
  );

  // In a full run the backlog scenario before this one has stopped the shared process.
  if (!bench.hookline) await bench.startHookline('retention');
  const pool = bench.db!.pool;
  const today = dayOf(Date.now());
  const days = Array.from({ length: FILLED_DAYS }, (_, i) => today - FILLED_DAYS + i);
  const filler = await bench.createWebhooks(
    'order.cancelled',
    bench.ports.map((_, i) => bench.url(i, `/ok/ret-fill/${i}`)),
  );
  const fillMs = await fillDays(
    pool,
    { storeId: STORE, type: 'order.cancelled', webhookIds: filler, deliveries: rows, days, attempts: true },
    (line) => bench.log(line),
  );

  /** Publishes the phase's events in bulk and answers its deliveries/s, first to last arrival. */
  async function phase(type: EventType, path: string, during?: () => Promise<void>): Promise<{ perSec: number; allDurable: boolean }> {
    const webhookIds = await bench.createWebhooks(
      type,
      bench.ports.map((_, i) => bench.url(i, `/ok/${path}/${i}`)),
    );
    const total = s.retentionEvents * webhookIds.length;
    await bench.receiver!.call('clear');
    await bulkPublish(pool, { storeId: STORE, type, webhookIds, events: s.retentionEvents, batchEvents: 200, notify: true });
    const concurrent = during?.();
    const arrived = await bench.waitForArrivals(`/ok/${path}/`, total, 30_000);
    await concurrent;
    const durable = await bench.waitForStatus(type, 'succeeded', total, 60_000);
    const { perSec, allDurable } = drainRates(arrived, durable, total);
    bench.log(`  ${path}: ${perSec} deliveries/s${allDurable ? '' : ' (NOT all durable)'}`);
    return { perSec, allDurable };
  }

  // Unmeasured: the same load once first, so that both measured phases run on compiled code.
  // Types no other scenario publishes: a phase's deliveries are counted by their type.
  await phase('product.created', 'ret-warm');
  const alone = await phase('delivery.completed', 'ret-alone');
  let dropMs = Number.NaN;
  let droppedRows = 0;
  let droppedPartitions = 0;
  const duringDrop = await phase('delivery.failed', 'ret-drop', async () => {
    const started = performance.now();
    // RETENTION_DAYS=3 at this moment: the oldest filled day (today − 4) is entirely past it.
    const report = await new PartitionMaintenance(pool).run(Date.now(), 3);
    dropMs = round(performance.now() - started, 1);
    droppedRows = report.dropped.reduce((sum, d) => sum + d.rows, 0);
    droppedPartitions = report.dropped.length;
  });
  const ratio = alone.perSec > 0 ? round(duringDrop.perSec / alone.perSec, 2) : Number.NaN;
  const claimRatio = round(claim.atLarge.claimMedianMs / claim.at0.claimMedianMs, 2);

  Object.assign(bench.results, {
    retentionRows: rows,
    retentionFillMs: fillMs,
    retentionDropMs: dropMs,
    retentionDroppedPartitions: droppedPartitions,
    retentionDroppedRows: droppedRows,
    retentionAlonePerSec: alone.allDurable ? alone.perSec : 0,
    retentionDuringDropPerSec: duringDrop.allDurable ? duringDrop.perSec : 0,
    retentionThroughputRatio: alone.allDurable && duringDrop.allDurable ? ratio : 0,
    retentionClaimMsAt0: claim.at0.claimMedianMs,
    retentionClaimMsAtLarge: claim.atLarge.claimMedianMs,
    retentionClaimRatio: claimRatio,
    retentionClaimRowsAtLarge: claim.atLarge.rowsInTable,
  });
  const large = rows >= 1_000_000 ? `${rows / 1_000_000}M` : `${rows / 1000}k`;
  bench.row(
    '9 retention',
    `claim of 500 (median): 0 → ${large} rows over 30 daily partitions`,
    `${claim.at0.claimMedianMs} → ${claim.atLarge.claimMedianMs} ms`,
    'within 2×',
    claimRatio <= 2,
  );
  bench.row('9 retention', `drop of the oldest day (${droppedPartitions} partitions, ${droppedRows} rows)`, `${dropMs} ms`);
  bench.row('9 retention', 'deliveries/s alone → during the drop', `${alone.perSec} → ${duringDrop.perSec}`);
  bench.row('9 retention', 'throughput during the drop ÷ without', ratio, '≥ 0.8', ratio >= 0.8);
  bench.log(
    `  dropped ${droppedPartitions} partitions (${droppedRows} rows) of ${new Date((today - FILLED_DAYS) * DAY_MS).toISOString().slice(0, 10)} in ${dropMs} ms`,
  );
}
