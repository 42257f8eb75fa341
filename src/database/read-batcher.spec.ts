import { ReadBatcher } from './read-batcher';

/** A statement the test answers by hand: what each call was given, and how to end it. */
class ManualStatements {
  readonly calls: Array<{ queries: number[]; finish: (error?: Error) => void }> = [];

  run = (queries: number[]): Promise<string[]> =>
    new Promise<string[]>((resolve, reject) => {
      this.calls.push({ queries, finish: (error) => (error ? reject(error) : resolve(queries.map((q) => `answer ${q}`))) });
    });

  batches(): number[][] {
    return this.calls.map((call) => call.queries);
  }
}

/** Lets the promise callbacks queued so far run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ReadBatcher', () => {
  it('sends a read at once when a statement is free, and answers it alone', async () => {
    const statements = new ManualStatements();
    const batcher = new ReadBatcher(statements.run, 2, 100);
    const answer = batcher.read(7);
    expect(statements.batches()).toEqual([[7]]);
    statements.calls[0].finish();
    await expect(answer).resolves.toBe('answer 7');
  });

  it('keeps at most maxInFlight statements out; reads that arrive meanwhile go together in the next', async () => {
    const statements = new ManualStatements();
    const batcher = new ReadBatcher(statements.run, 2, 100);
    const answers = [1, 2, 3, 4, 5].map((q) => batcher.read(q));
    expect(statements.batches()).toEqual([[1], [2]]);

    statements.calls[1].finish();
    await settle();
    expect(statements.batches()).toEqual([[1], [2], [3, 4, 5]]);
    const six = batcher.read(6);
    expect(statements.batches()).toHaveLength(3);

    statements.calls[0].finish();
    await settle();
    expect(statements.batches()).toEqual([[1], [2], [3, 4, 5], [6]]);
    statements.calls[2].finish();
    statements.calls[3].finish();
    await expect(Promise.all([...answers, six])).resolves.toEqual([1, 2, 3, 4, 5, 6].map((q) => `answer ${q}`));
  });

  it('puts at most maxBatch reads in one statement', async () => {
    const statements = new ManualStatements();
    const batcher = new ReadBatcher(statements.run, 1, 3);
    const answers = [1, 2, 3, 4, 5, 6, 7, 8].map((q) => batcher.read(q));
    for (let i = 0; i < 4; i++) {
      statements.calls[i].finish();
      await settle();
    }
    expect(statements.batches()).toEqual([[1], [2, 3, 4], [5, 6, 7], [8]]);
    await expect(Promise.all(answers)).resolves.toHaveLength(8);
  });

  it("fails every read of a failed statement with its error, and no other statement's", async () => {
    const statements = new ManualStatements();
    const batcher = new ReadBatcher(statements.run, 1, 100);
    const first = batcher.read(1);
    const together = [2, 3].map((q) => batcher.read(q));
    statements.calls[0].finish(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await settle();
    const later = [4, 5].map((q) => batcher.read(q));
    statements.calls[1].finish();
    await expect(Promise.all(together)).resolves.toEqual(['answer 2', 'answer 3']);
    await settle();
    expect(statements.batches()).toEqual([[1], [2, 3], [4, 5]]);
    statements.calls[2].finish(new Error('statement timeout'));
    for (const read of later) await expect(read).rejects.toThrow('statement timeout');
  });
});
