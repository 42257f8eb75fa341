/** Endpoints whose slots are remembered at most; past it, those with nothing in flight start afresh. */
const MAX_REMEMBERED = 10_000;

/**
 * How many of ENDPOINT_CONCURRENCY's slots each endpoint may use in this process. An attempt that
 * times out held its slot for the whole DELIVERY_TIMEOUT_MS, so each timeout halves the
 * endpoint's slots (down to 1) and each success gives one back: an endpoint that hangs soon holds
 * a single slot, one that recovers is back to all of them after as many successes. Kept in memory,
 * per process: a new process starts every endpoint with all its slots and learns again from its
 * first timeouts, which the store's slots bound meanwhile (docs/reliability.md).
 */
export class EndpointSlots {
  /** Endpoints below the full count; the others have `perEndpoint`. */
  private readonly reduced = new Map<string, number>();

  constructor(readonly perEndpoint: number) {}

  /** The slots `webhookId` may use now. */
  of(webhookId: string): number {
    return this.reduced.get(webhookId) ?? this.perEndpoint;
  }

  /** Endpoints with fewer slots than the full count, and how many they have. */
  entries(): IterableIterator<[string, number]> {
    return this.reduced.entries();
  }

  /** An attempt to `webhookId` timed out. */
  timedOut(webhookId: string, inFlight: (webhookId: string) => number): void {
    const halved = Math.max(1, Math.floor(this.of(webhookId) / 2));
    this.reduced.delete(webhookId);
    if (halved >= this.perEndpoint) return;
    if (this.reduced.size >= MAX_REMEMBERED) this.forgetIdle(inFlight);
    // Re-inserted, so that the map keeps the endpoints in the order they last changed.
    this.reduced.set(webhookId, halved);
  }

  /** An attempt to `webhookId` succeeded. */
  succeeded(webhookId: string): void {
    const slots = this.reduced.get(webhookId);
    if (slots === undefined) return;
    if (slots + 1 >= this.perEndpoint) this.reduced.delete(webhookId);
    else this.reduced.set(webhookId, slots + 1);
  }

  private forgetIdle(inFlight: (webhookId: string) => number): void {
    for (const webhookId of this.reduced.keys()) {
      if (this.reduced.size < MAX_REMEMBERED / 2) return;
      if (inFlight(webhookId) === 0) this.reduced.delete(webhookId);
    }
  }
}
