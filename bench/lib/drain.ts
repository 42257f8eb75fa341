import type { ArrivalSummary } from '../receiver';

/**
 * A drain's rates (throughput, backlog): distinct arrivals per second from first to last arrival,
 * and per second until the database showed all `total` succeeded (0 unless all did).
 */
export function drainRates(
  arrived: ArrivalSummary,
  durable: { at: number; counts: Record<string, number> },
  total: number,
): { spanMs: number; perSec: number; allDurable: boolean; durablePerSec: number } {
  const spanMs = arrived.last - arrived.first;
  const allDurable = (durable.counts.succeeded ?? 0) === total && arrived.unique === total;
  return {
    spanMs,
    perSec: Math.round(arrived.unique / (spanMs / 1000)),
    allDurable,
    durablePerSec: allDurable ? Math.round(total / ((durable.at - arrived.first) / 1000)) : 0,
  };
}
