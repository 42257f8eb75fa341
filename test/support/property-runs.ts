/**
 * fast-check's `interruptAfterTimeLimit` abandons the run under way when the time is up (it races
 * the run against a timer) and `fc.assert` returns while that run's request may still be in
 * flight. A PUT abandoned that way committed during the next test and changed the row that test's
 * snapshot compared (hostile-clients, a CI run of 2026-11-23). A predicate wrapped with `keep`
 * leaves its last run here, so that the test waits for it, and sees its failure, before it ends.
 */
export class LastRun {
  private last: Promise<void> = Promise.resolve();

  keep<T>(predicate: (value: T) => Promise<void>): (value: T) => Promise<void> {
    return (value) => (this.last = predicate(value));
  }

  settled(): Promise<void> {
    return this.last;
  }
}
