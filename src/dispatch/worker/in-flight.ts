import type { ClaimedDelivery, SlotLimits } from '../store/delivery.repository';
import { EndpointSlots } from './endpoint-slots';

/** What a settled send freed: a share of the slots of an endpoint or a store that had them all taken. */
export interface Freed {
  endpoint: boolean;
  store: boolean;
}

/**
 * The deliveries this worker is sending, in total, per endpoint and per store: what caps a claim
 * (the free slots of DISPATCH_CONCURRENCY, STORE_CONCURRENCY per store so that no store takes
 * every slot, and each endpoint's share of ENDPOINT_CONCURRENCY, see EndpointSlots) and what
 * shutdown waits for.
 */
export class InFlight {
  private readonly byId = new Map<string, ClaimedDelivery>();
  private readonly byEndpoint = new Map<string, number>();
  private readonly byStore = new Map<string, number>();
  private readonly sends = new Set<Promise<void>>();
  private readonly endpoints: EndpointSlots;

  /**
   * @param refill a full endpoint or store is reported freed (`onDone`) once this share of its
   *   slots is free again, not at each slot: a claim per freed slot adds up.
   */
  constructor(
    private readonly concurrency: number,
    perEndpoint: number,
    private readonly perStore: number,
    private readonly refill: { endpoint: number; store: number },
  ) {
    this.endpoints = new EndpointSlots(perEndpoint);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Slots free for a claim. */
  get room(): number {
    return this.concurrency - this.byId.size;
  }

  /** Slots `storeId` has free. */
  storeRoom(storeId: string): number {
    return this.perStore - (this.byStore.get(storeId) ?? 0);
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Resolves once every send under way has ended. */
  drained(): Promise<unknown> {
    return Promise.all([...this.sends]);
  }

  /** Counts `delivery` in until `send` settles; then tells `onDone` what that freed. */
  track(delivery: ClaimedDelivery, send: Promise<void>, onDone: (freed: Freed) => void): void {
    const { webhookId, storeId } = delivery;
    this.byId.set(delivery.id, delivery);
    this.byEndpoint.set(webhookId, (this.byEndpoint.get(webhookId) ?? 0) + 1);
    this.byStore.set(storeId, (this.byStore.get(storeId) ?? 0) + 1);
    const tracked = send.finally(() => {
      this.byId.delete(delivery.id);
      const endpointLeft = decrement(this.byEndpoint, webhookId);
      const storeLeft = decrement(this.byStore, storeId);
      this.sends.delete(tracked);
      onDone({
        endpoint: endpointLeft === refillMark(this.endpoints.of(webhookId), this.refill.endpoint),
        store: storeLeft === refillMark(this.perStore, this.refill.store),
      });
    });
    this.sends.add(tracked);
  }

  /** An attempt to `webhookId` timed out: it gets fewer slots. */
  timedOut(webhookId: string): void {
    this.endpoints.timedOut(webhookId, (id) => this.byEndpoint.get(id) ?? 0);
  }

  /** An attempt to `webhookId` succeeded: it gets a slot back, if it had lost some. */
  succeeded(webhookId: string): void {
    this.endpoints.succeeded(webhookId);
  }

  /** What the next claim may take per endpoint and per store: none of the full ones, the free slots of the others. */
  limits(): SlotLimits {
    const excluded: string[] = [];
    const partial = new Map<string, number>();
    const excludedStores: string[] = [];
    const partialStores = new Map<string, number>();
    for (const [webhookId, count] of this.byEndpoint) {
      const available = this.endpoints.of(webhookId) - count;
      if (available <= 0) excluded.push(webhookId);
      else partial.set(webhookId, available);
    }
    for (const [webhookId, slots] of this.endpoints.entries()) {
      if (!this.byEndpoint.has(webhookId)) partial.set(webhookId, slots);
    }
    for (const [storeId, count] of this.byStore) {
      const available = this.perStore - count;
      if (available <= 0) excludedStores.push(storeId);
      else partialStores.set(storeId, available);
    }
    return { excluded, partial, perEndpoint: this.endpoints.perEndpoint, excludedStores, partialStores, perStore: this.perStore };
  }
}

/** The count at which `share` of `slots` is free again. */
function refillMark(slots: number, share: number): number {
  return slots - Math.max(1, Math.floor(slots * share));
}

function decrement(counts: Map<string, number>, key: string): number {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
  return left;
}
