import type { ArrivalSummary } from '../receiver';
import type { Bench } from './bench';

export interface Drained {
  arrived: ArrivalSummary;
  durable: { at: number; counts: Record<string, number> };
}

/**
 * Waits until `total` deliveries of `type` arrived under `prefix` (or nothing new came for 30 s),
 * then until the database holds them all succeeded (at most 60 s).
 */
export async function awaitDrain(bench: Bench, prefix: string, type: string, total: number): Promise<Drained> {
  const arrived = await bench.waitForArrivals(prefix, total, 30_000);
  const durable = await bench.waitForStatus(type, 'succeeded', total, 60_000);
  return { arrived, durable };
}

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
