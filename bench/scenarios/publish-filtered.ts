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
 * (2 requests in flight) to 10 endpoints of a store of its own, without filters and with a filter on
 * each endpoint that every event matches, so both write the same deliveries and only the evaluation
 * differs. The endpoints are limited to 1 attempt a second, so their deliveries wait: publishing is
 * measured alone, not beside the sending of the phase before. Pairs of phases, the order turned
 * every pair; the median of the pairs' ratios counts, since other processes on the machine move
 * single phases by a third and more, and a pair shares its moment.
 */
export async function publishFiltered(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const total = s.publishFilteredEvents * ENDPOINTS;
  bench.log(
    `2b publish-filtered: ${s.publishFilteredRounds} pairs of ${s.publishFilteredEvents} events × ${ENDPOINTS} endpoints, "${FILTER}"`,
  );
  const store = await bench.api<{ id: string }>('POST', '/stores', { name: 'bench publish-filtered' });
  const { key } = await bench.api<{ key: string }>('POST', `/stores/${store.id}/api-keys`, {
    name: 'bench publish-filtered',
    scopes: ['events:write', 'webhooks:write'],
  });
  const ids: string[] = [];
  for (const [i] of bench.ports.entries()) {
    const body = { name: `bench filtered ${i}`, url: bench.url(i, `/ok/pf/${i}`), events: [TYPE], rateLimitPerSecond: 1 };
    ids.push((await bench.api<{ id: string }>('POST', '/webhooks', body, key)).id);
  }
  const phase = async (filter: string | null): Promise<number> => {
    for (const id of ids) await bench.api('PUT', `/webhooks/${id}`, { filter }, key);
    const published = await batchPublish({
      baseUrl: bench.hookline!.baseUrl,
      type: TYPE,
      events: s.publishFilteredEvents,
      batchEvents: BATCH_EVENTS,
      inFlight: 2,
      apiKey: key,
    });
    if (published.deliveries !== total) throw new Error(`the batches enqueued ${published.deliveries} deliveries, not ${total}`);
    return Math.round((published.deliveries / published.ms) * 1000);
  };
  // The waiting deliveries of a pair go before the next, so that every pair writes into tables of one size.
  const clear = (): Promise<unknown> => bench.db!.pool.query('DELETE FROM delivery_queue WHERE store_id = $1', [store.id]);

  // Warm-up, uncounted: the statements' plans and the JIT for both.
  await phase(null);
  await phase(FILTER);
  await clear();
  const plainRates: number[] = [];
  const filteredRates: number[] = [];
  const ratios: number[] = [];
  for (let pair = 0; pair < s.publishFilteredRounds; pair++) {
    const filteredFirst = pair % 2 === 1;
    const first = await phase(filteredFirst ? FILTER : null);
    const second = await phase(filteredFirst ? null : FILTER);
    const [plain, filtered] = filteredFirst ? [second, first] : [first, second];
    plainRates.push(plain);
    filteredRates.push(filtered);
    ratios.push(filtered / plain);
    bench.log(`  pair ${pair + 1}: no filter ${plain}/s, filtered ${filtered}/s: ${round(filtered / plain, 3)}`);
    await clear();
  }
  const ratio = round(median(ratios), 3);
  Object.assign(bench.results, {
    publishFilteredPlainPerSec: plainRates,
    publishFilteredPerSec: filteredRates,
    publishFilteredRatio: ratio,
  });
  bench.row(
    '2b publish-filtered',
    `deliveries enqueued/s by POST /events/batch, no filter / a filter on all ${ENDPOINTS} endpoints (medians of ${ratios.length} pairs)`,
    `${Math.round(median(plainRates))} / ${Math.round(median(filteredRates))}`,
  );
  bench.row('2b publish-filtered', 'filtered ÷ no filter, median of the pairs', ratio, '≥ 0.8', ratio >= 0.8);
}
