import type { AttemptOutcome, RecordedOutcomes } from '../store/delivery.repository';
import { FLUSH_BATCH, FLUSH_DELAY_MS, FLUSH_RETRY_MS, OutcomeRecorder, type OutcomeWriter } from './outcome-recorder';

function outcome(id: string): AttemptOutcome {
  return {
    deliveryId: id,
    leaseToken: 'lease',
    attempt: null,
    status: 'succeeded',
    retryDelayMs: 0,
    decidedAt: Date.now(),
    lastStatusCode: 200,
    lastError: null,
  };
}

const unavailable = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const refused = Object.assign(new Error('value too long'), { code: '22001' });

class FakeWriter implements OutcomeWriter {
  batches: string[][] = [];
  failWith: (batch: AttemptOutcome[]) => Error | undefined = () => undefined;
  async recordOutcomes(outcomes: AttemptOutcome[]): Promise<RecordedOutcomes> {
    const error = this.failWith(outcomes);
    if (error) throw error;
    this.batches.push(outcomes.map((o) => o.deliveryId));
    return { scheduled: [], failing: [] };
  }
}

/** Lets the recorder's promise chains run under fake timers. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('OutcomeRecorder', () => {
  let writer: FakeWriter;
  let written: string[][];
  let recorder: OutcomeRecorder;

  beforeEach(() => {
    jest.useFakeTimers();
    writer = new FakeWriter();
    written = [];
    recorder = new OutcomeRecorder(writer, (batch) => written.push(batch.map((o) => o.deliveryId)));
  });

  afterEach(() => jest.useRealTimers());

  it('writes the outcomes of a short while in one statement', async () => {
    recorder.record(outcome('a'));
    recorder.record(outcome('b'));
    expect(writer.batches).toEqual([]);
    jest.advanceTimersByTime(FLUSH_DELAY_MS);
    await settle();
    expect(writer.batches).toEqual([['a', 'b']]);
    expect(written).toEqual([['a', 'b']]);
  });

  it('writes at once when a full batch is waiting', async () => {
    for (let i = 0; i < FLUSH_BATCH; i++) recorder.record(outcome(`d${i}`));
    await settle();
    expect(writer.batches).toHaveLength(1);
    expect(writer.batches[0]).toHaveLength(FLUSH_BATCH);
  });

  it('keeps outcomes while the database is away and writes them, in order, once it is back', async () => {
    writer.failWith = () => unavailable;
    recorder.record(outcome('a'));
    jest.advanceTimersByTime(FLUSH_DELAY_MS);
    await settle();
    expect(recorder.failing).toBe(true);
    recorder.record(outcome('b'));
    writer.failWith = () => undefined;
    jest.advanceTimersByTime(FLUSH_RETRY_MS);
    await settle();
    expect(writer.batches).toEqual([['a', 'b']]);
    expect(recorder.failing).toBe(false);
  });

  it('writes a refused batch one by one and drops only the outcome the database refuses', async () => {
    writer.failWith = (batch) => (batch.some((o) => o.deliveryId === 'bad') ? refused : undefined);
    recorder.record(outcome('a'));
    recorder.record(outcome('bad'));
    recorder.record(outcome('c'));
    jest.advanceTimersByTime(FLUSH_DELAY_MS);
    await settle();
    expect(writer.batches).toEqual([['a'], ['c']]);
    expect(recorder.failing).toBe(false);
  });

  it('makes one last try on close and drops what comes after', async () => {
    recorder.record(outcome('a'));
    await recorder.close();
    expect(writer.batches).toEqual([['a']]);
    recorder.record(outcome('late'));
    jest.advanceTimersByTime(FLUSH_DELAY_MS * 10);
    await settle();
    expect(writer.batches).toEqual([['a']]);
  });
});
