import { BUSY_UTILIZATION, ClaimPacing, eventLoopUtilization, PACING_WINDOW_MS } from './claim-pacing';

describe('ClaimPacing', () => {
  let now: number;
  let readings: number[];
  let reads: number;

  const pacing = (slots = 500): ClaimPacing =>
    new ClaimPacing(
      slots,
      () => {
        reads++;
        return readings.shift() ?? 0;
      },
      () => now,
    );

  beforeEach(() => {
    now = 1_000_000;
    readings = [];
    reads = 0;
  });

  it('waits for a quarter of the slots until the event loop is seen busy', () => {
    readings = [1];
    const p = pacing();
    expect(p.refill).toBe(125);
    expect(p.waitsLonger).toBe(false);
  });

  it('waits for half of the slots after a window in which the event loop was busy, a quarter again once it idles', () => {
    readings = [0, BUSY_UTILIZATION, 0.5];
    const p = pacing();
    now += PACING_WINDOW_MS;
    expect(p.refill).toBe(250);
    expect(p.waitsLonger).toBe(true);
    now += PACING_WINDOW_MS;
    expect(p.refill).toBe(125);
    expect(p.waitsLonger).toBe(false);
  });

  it('reads the event loop at most once a window', () => {
    readings = [0, 1, 0];
    const p = pacing();
    now += PACING_WINDOW_MS;
    expect(p.refill).toBe(250);
    now += PACING_WINDOW_MS - 1;
    expect(p.refill).toBe(250);
    expect(reads).toBe(2);
  });

  it('waits for at least one slot, and no longer when the loop is busy if half is no more than a quarter', () => {
    readings = [0, 1];
    const p = pacing(1);
    expect(p.refill).toBe(1);
    now += PACING_WINDOW_MS;
    expect(p.refill).toBe(1);
    expect(p.waitsLonger).toBe(false);
  });

  it('reads the event loop as the share of time since the reading before', () => {
    const read = eventLoopUtilization();
    read();
    const until = Date.now() + 30;
    while (Date.now() < until) {
      // A loop that never yields: the event loop is busy all the while.
    }
    expect(read()).toBeGreaterThan(BUSY_UTILIZATION);
  });
});
