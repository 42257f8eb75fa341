import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** While due work waits, a claim is worth its statement once this share of the slots is free. */
export const REFILL_SHARE = 0.25;
/** The share while the process has no CPU to spare: fewer, larger claims cost less per delivery. */
export const BUSY_REFILL_SHARE = 0.5;
/** The event loop counts as busy above this utilization (time not spent waiting for I/O). */
export const BUSY_UTILIZATION = 0.9;
/** The shortest time a reading of the event loop spans: over a few milliseconds it says little. */
export const PACING_WINDOW_MS = 100;

/** The event loop's utilization since the reading before (the first call: since the process began). */
export type UtilizationReader = () => number;

/** Reads `performance.eventLoopUtilization()` as a difference from the previous reading. */
export function eventLoopUtilization(): UtilizationReader {
  let last: EventLoopUtilization | undefined;
  return () => {
    const now = performance.eventLoopUtilization();
    const since = last ? performance.eventLoopUtilization(now, last) : now;
    last = now;
    return since.utilization;
  };
}

/**
 * How many free slots a worker waits for before it claims again while due work waits. Small
 * claims keep slots busy when receivers are slow, but each claim and its outcome batch cost a
 * statement and a round of sends: when the process is CPU-bound, claims of a quarter of the slots
 * cost more CPU per delivery than claims of half, and the drain slows. So the worker waits for
 * half while its event loop was busy over the last window, and for a quarter otherwise.
 */
export class ClaimPacing {
  private readonly idleRefill: number;
  private readonly busyRefill: number;
  private busyLoop = false;
  private readAt: number;

  constructor(
    slots: number,
    private readonly utilization: UtilizationReader = eventLoopUtilization(),
    private readonly clock: () => number = Date.now,
  ) {
    this.idleRefill = Math.max(1, Math.floor(slots * REFILL_SHARE));
    this.busyRefill = Math.max(1, Math.floor(slots * BUSY_REFILL_SHARE));
    this.readAt = clock();
    utilization();
  }

  /** Free slots worth a claim now; the event loop is read again once the last reading is a window old. */
  get refill(): number {
    const now = this.clock();
    if (now - this.readAt >= PACING_WINDOW_MS) {
      this.busyLoop = this.utilization() >= BUSY_UTILIZATION;
      this.readAt = now;
    }
    return this.busyLoop ? this.busyRefill : this.idleRefill;
  }

  /** Whether the worker now waits for more free slots than it would with an idle loop. */
  get waitsLonger(): boolean {
    return this.busyLoop && this.busyRefill > this.idleRefill;
  }
}
