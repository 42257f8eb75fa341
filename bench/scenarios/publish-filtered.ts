import type { EventType } from '../../src/catalogue/event-catalogue';
import type { Bench } from '../lib/bench';
import { batchPublish } from '../lib/batch-publish';
import { ENDPOINTS } from '../lib/config';
import { median, round } from '../lib/stats';

/** Events per POST /events/batch: its maximum. */
const BATCH_EVENTS = 1000;
const TYPE: EventType = 'order.completed';
/** Two comparisons, true of the catalogue's example: every event still reaches every endpoint (a phase checks). */
const FILTER = '$.data.total > 0 && $.data.currency == "EUR"';

/**
 * 2b. What a content filter on every endpoint costs publishing: POST /events/batch of 1,000 events
 * to 10 endpoints, as in throughput, in its own store, without filters and with a filter on each
 * endpoint that every event matches (so both write the same deliveries and only the evaluation
 * differs). Phases in the order none, filtered, filtered, none; the faster of each pair counts.
 * Each phase is drained before the next starts.
 */
export async function publishFiltered(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const total = s.publishFilteredEvents * ENDPOINTS;
  bench.log(`2b publish-filtered: ${s.publishFilteredEvents} events × ${ENDPOINTS} endpoints a phase, without and with "${FILTER}"`);
  const store = await bench.api<{ id: string }>('POST', '/stores', { name: 'bench publish-filtered' });
  const { key } = await bench.api<{ key: string }>('POST', `/stores/${store.id}/api-keys`, {
    name: 'bench publish-filtered',
    scopes: ['events:write', 'webhooks:write'],
  });
  const ids: string[] = [];
  for (const [i] of bench.ports.entries()) {
    const url = bench.url(i, `/ok/pf/${i}`);
    ids.push((await bench.api<{ id: string }>('POST', '/webhooks', { name: `bench filtered ${i}`, url, events: [TYPE] }, key)).id);
  }
  const setFilter = async (filter: string | null): Promise<void> => {
    for (const id of ids) await bench.api('PUT', `/webhooks/${id}`, { filter }, key);
  };
  const phase = async (filter: string | null): Promise<number> => {
    await setFilter(filter);
    await bench.receiver!.call('clear');
    const published = await batchPublish({
      baseUrl: bench.hookline!.baseUrl,
      type: TYPE,
      events: s.publishFilteredEvents,
      batchEvents: BATCH_EVENTS,
      inFlight: 2,
      apiKey: key,
    });
    if (published.deliveries !== total) throw new Error(`the batches enqueued ${published.deliveries} deliveries, not ${total}`);
    const perSec = Math.round((published.deliveries / published.ms) * 1000);
    bench.log(`  ${filter ? 'filtered' : 'no filter'}: ${published.deliveries} deliveries enqueued in ${published.ms} ms: ${perSec}/s`);
    const arrived = await bench.waitForArrivals('/ok/pf/', total, 30_000);
    if (arrived.unique < total) throw new Error(`only ${arrived.unique} of ${total} deliveries arrived`);
    return perSec;
  };
  // Warm-up, uncounted: a fresh statement plan and JIT for both.
  await phase(null);
  await phase(FILTER);
  const plainRates: number[] = [];
  const filteredRates: number[] = [];
  for (let round = 0; round < s.publishFilteredRounds; round++) {
    plainRates.push(await phase(null));
    filteredRates.push(await phase(FILTER), await phase(FILTER));
    plainRates.push(await phase(null));
  }
  const plain = Math.round(median(plainRates));
  const filtered = Math.round(median(filteredRates));
  const ratio = round(filtered / plain, 3);
  Object.assign(bench.results, {
    publishFilteredPlainPerSec: plainRates,
    publishFilteredPerSec: filteredRates,
    publishFilteredRatio: ratio,
  });
  bench.row(
    '2b publish-filtered',
    `deliveries enqueued/s by POST /events/batch, no filter / a filter on all ${ENDPOINTS} endpoints (medians of ${plainRates.length})`,
    `${plain} / ${filtered}`,
  );
  bench.row('2b publish-filtered', 'filtered ÷ no filter', ratio, '≥ 0.8', ratio >= 0.8);
}
