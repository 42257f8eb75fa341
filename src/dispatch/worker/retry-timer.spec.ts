import { CLAIM_EARLY_MS } from '../store/delivery.repository';
import type { AttemptOutcome } from '../store/delivery.repository';
import { NEXT_DUE_CHECK_INTERVAL_MS, RetryTimer } from './retry-timer';

describe('RetryTimer', () => {
  let wakes: number[];
  let nextDue: Date | null;
  let lookUps: number;
  let timer: RetryTimer;

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    wakes = [];
    nextDue = null;
    lookUps = 0;
    timer = new RetryTimer(
      () => wakes.push(Date.now()),
      async () => {
        lookUps++;
        return nextDue;
      },
      () => undefined,
    );
    timer.start();
  });

  afterEach(() => {
    timer.stop();
    jest.useRealTimers();
  });

  it('wakes the worker when a retry it scheduled comes due, not before', () => {
    timer.scheduleLocalRetry(Date.now() + 1_000, 1_000);
    jest.advanceTimersByTime(999);
    expect(wakes).toEqual([]);
    jest.advanceTimersByTime(5);
    expect(wakes).toHaveLength(1);
  });

  it('wakes the worker for each second that deliveries put off by a rate limit come due', () => {
    timer.scheduleDeferred(Date.now() + 1_000);
    timer.scheduleDeferred(Date.now() + 2_000);
    jest.advanceTimersByTime(1_005);
    expect(wakes).toHaveLength(1);
    jest.advanceTimersByTime(1_000);
    expect(wakes).toHaveLength(2);
  });

  it('keeps one timer, for the earliest work', () => {
    timer.wakeAt(Date.now() + 500);
    timer.wakeAt(Date.now() + 100);
    timer.wakeAt(Date.now() + 300);
    jest.advanceTimersByTime(110);
    expect(wakes).toHaveLength(1);
    // Later moments asked for before were superseded, not queued.
    jest.advanceTimersByTime(1_000);
    expect(wakes).toHaveLength(1);
  });

  it('wakes once for retries due within the claim-early window, then again for the next later one', () => {
    const start = Date.now();
    for (let i = 0; i < 10; i++) timer.scheduleLocalRetry(start + 1_000 + i, 1_000);
    timer.scheduleLocalRetry(start + 4_000, 4_000);
    jest.advanceTimersByTime(1_100);
    expect(wakes).toHaveLength(1);
    jest.advanceTimersByTime(3_000);
    expect(wakes).toHaveLength(2);
    expect(wakes[1]).toBeGreaterThanOrEqual(start + 4_000);
  });

  it('gives a retry written later than planned a timer of its own', () => {
    const decidedAt = Date.now();
    const outcome = { deliveryId: 'del_1', decidedAt, retryDelayMs: 1_000 } as AttemptOutcome;
    timer.catchUp([outcome], [{ deliveryId: 'del_1', dueAt: decidedAt + 1_000 + CLAIM_EARLY_MS }]);
    jest.advanceTimersByTime(1_000 + CLAIM_EARLY_MS + 5);
    expect(wakes).toHaveLength(1);
    // A retry written on time needs nothing more: its timer was set when it was decided.
    const onTime = { deliveryId: 'del_2', decidedAt: Date.now(), retryDelayMs: 1_000 } as AttemptOutcome;
    timer.catchUp([onTime], [{ deliveryId: 'del_2', dueAt: onTime.decidedAt + 1_000 }]);
    jest.advanceTimersByTime(2_000);
    expect(wakes).toHaveLength(1);
  });

  it('asks the database for other processes’ due work at most once a second', async () => {
    nextDue = new Date(Date.now() + 200);
    timer.checkNextDue();
    timer.checkNextDue();
    expect(lookUps).toBe(1);
    await Promise.resolve();
    jest.advanceTimersByTime(205);
    expect(wakes).toHaveLength(1);
    jest.advanceTimersByTime(NEXT_DUE_CHECK_INTERVAL_MS);
    timer.checkNextDue();
    expect(lookUps).toBe(2);
  });

  it('does nothing once stopped', () => {
    timer.scheduleLocalRetry(Date.now() + 100, 100);
    timer.stop();
    jest.advanceTimersByTime(1_000);
    timer.wakeAt(Date.now() + 10);
    jest.advanceTimersByTime(1_000);
    expect(wakes).toEqual([]);
  });
});
