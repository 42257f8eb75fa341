/** Polls `probe` until `accept` holds, or fails at the deadline (no fixed sleeps in tests). */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  { deadlineMs = 10_000, intervalMs = 25, what = 'condition' }: { deadlineMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  let last: T;
  for (;;) {
    last = await probe();
    if (accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${deadlineMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
