import type { ClaimedDelivery, EndpointLimits } from './delivery.repository';

/**
 * The deliveries this worker is sending, in total and per endpoint: what caps a claim (the free
 * slots of DISPATCH_CONCURRENCY, and ENDPOINT_CONCURRENCY per endpoint, so that a slow endpoint
 * never takes every slot) and what shutdown waits for.
 */
export class InFlight {
  private readonly byId = new Map<string, ClaimedDelivery>();
  private readonly byEndpoint = new Map<string, number>();
  private readonly sends = new Set<Promise<void>>();

  constructor(
    private readonly concurrency: number,
    private readonly perEndpoint: number,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  /** Slots free for a claim. */
  get room(): number {
    return this.concurrency - this.byId.size;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Resolves once every send under way has ended. */
  drained(): Promise<unknown> {
    return Promise.all([...this.sends]);
  }

  /**
   * Counts `delivery` in until `send` settles; then calls `onDone` with the endpoint's count of
   * sends left.
   */
  track(delivery: ClaimedDelivery, send: Promise<void>, onDone: (leftForEndpoint: number) => void): void {
    this.byId.set(delivery.id, delivery);
    this.byEndpoint.set(delivery.webhookId, (this.byEndpoint.get(delivery.webhookId) ?? 0) + 1);
    const tracked = send.finally(() => {
      this.byId.delete(delivery.id);
      const left = (this.byEndpoint.get(delivery.webhookId) ?? 1) - 1;
      if (left > 0) this.byEndpoint.set(delivery.webhookId, left);
      else this.byEndpoint.delete(delivery.webhookId);
      this.sends.delete(tracked);
      onDone(left);
    });
    this.sends.add(tracked);
  }

  /** What the next claim may take per endpoint: none of the full ones, the free slots of the others. */
  endpointLimits(): EndpointLimits {
    const limits: EndpointLimits = { excluded: [], partial: [], perEndpoint: this.perEndpoint };
    for (const [webhookId, count] of this.byEndpoint) {
      const available = this.perEndpoint - count;
      if (available <= 0) limits.excluded.push(webhookId);
      else limits.partial.push({ webhookId, available });
    }
    return limits;
  }
}
