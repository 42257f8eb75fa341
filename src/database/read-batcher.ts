interface Waiting<Q, R> {
  query: Q;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs reads of one kind that arrive together as one statement. A read is sent at once while
 * fewer than `maxInFlight` statements are out; those that arrive while they all are wait and go
 * together in the next one (at most `maxBatch` each). At rest every statement carries a single
 * read and nothing waits; under load one round trip answers many requests.
 * `run` answers the reads in the order it was given them; if it fails, every read of that
 * statement fails with its error.
 */
export class ReadBatcher<Q, R> {
  private readonly waiting: Array<Waiting<Q, R>> = [];
  private inFlight = 0;

  constructor(
    private readonly run: (queries: Q[]) => Promise<R[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
  ) {}

  read(query: Q): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ query, resolve, reject });
      if (this.inFlight < this.maxInFlight) this.send();
    });
  }

  private send(): void {
    const batch = this.waiting.splice(0, this.maxBatch);
    this.inFlight++;
    this.run(batch.map((waiting) => waiting.query))
      .then(
        (results) => batch.forEach((waiting, i) => waiting.resolve(results[i])),
        (error: unknown) => batch.forEach((waiting) => waiting.reject(error)),
      )
      .finally(() => {
        this.inFlight--;
        if (this.waiting.length > 0) this.send();
      });
  }
}
