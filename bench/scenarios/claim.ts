import type { Bench } from '../lib/bench';
import { measureClaim } from '../lib/claim';
import { round } from '../lib/stats';

/** 6b. The claim statement's time with 0 and with 2,000,000 finished rows in deliveries. */
export async function claim(bench: Bench): Promise<void> {
  const s = bench.sizes;
  bench.log(
    `6 claim: DeliveryRepository.claimDue(${500}) from ${s.claimPending} due deliveries, with 0 and ${s.claimFinished} finished rows besides`,
  );
  const result = await measureClaim(
    bench.serverUrl!,
    { pending: s.claimPending, finished: s.claimFinished, runs: s.claimRuns, batch: 500 },
    (line) => bench.log(line),
    (db) => bench.extraDatabases.push(db),
  );
  const ratio = round(result.atLarge.claimMedianMs / result.at0.claimMedianMs, 2);
  Object.assign(bench.results, {
    claimMsAt0: result.at0.claimMedianMs,
    claimMsAt2M: result.atLarge.claimMedianMs,
    claimRatio: ratio,
    claimFinishedRows: s.claimFinished,
    claimPendingRows: s.claimPending,
    claimRowsAt0: result.at0.rowsInTable,
    claimRowsAtLarge: result.atLarge.rowsInTable,
    claimP90MsAt0: result.at0.claimP90Ms,
    claimP90MsAt2M: result.atLarge.claimP90Ms,
    claimEmptyTableMs: result.emptyTableClaimMs,
    recordOutcomesMsAt0: result.at0.recordMedianMs,
    recordOutcomesMsAt2M: result.atLarge.recordMedianMs,
    nextDueMsAt0: result.at0.nextDueMedianMs,
    nextDueMsAt2M: result.atLarge.nextDueMedianMs,
    claimFinishedInsertMs: result.finishedRowsInsertMs,
    claimPlanAt0: result.at0.plan,
    claimPlanAt2M: result.atLarge.plan,
    recordOutcomesPlanAt0: result.at0.recordPlan,
    recordOutcomesPlanAt2M: result.atLarge.recordPlan,
  });
  const large = s.claimFinished >= 1_000_000 ? `${s.claimFinished / 1_000_000}M` : `${s.claimFinished / 1000}k`;
  bench.row(
    '6 claim',
    `claim of 500 (median): 0 → ${large} finished rows`,
    `${result.at0.claimMedianMs} → ${result.atLarge.claimMedianMs} ms`,
    'within 2×',
    ratio <= 2,
  );
  bench.row(
    '6 claim',
    `recordOutcomes of 500 (median): 0 → ${large}`,
    `${result.at0.recordMedianMs} → ${result.atLarge.recordMedianMs} ms`,
  );
  bench.row('6 claim', `nextDueAt (median): 0 → ${large}`, `${result.at0.nextDueMedianMs} → ${result.atLarge.nextDueMedianMs} ms`);
  bench.log(
    `  claim ${result.at0.claimMedianMs} ms at ${result.at0.rowsInTable} rows, ${result.atLarge.claimMedianMs} ms at ${result.atLarge.rowsInTable} rows`,
  );
}
