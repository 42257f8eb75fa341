import type { ChildApp } from './child-app';
import { orderData } from './fixtures';
import type { Receiver } from './receiver';

export interface PublishLoad {
  /** Event id → the time its 202 arrived. */
  accepted: Map<string, number>;
  /** Answers other than 202, by status (0: no answer: refused, reset, timeout). */
  rejected: Map<number, number>;
  /** A few non-202 bodies, for the assertions on the error shape. */
  rejectedBodies: Array<{ status: number; body: string }>;
  /** Resolves when every request has been answered (or failed). */
  done: Promise<void>;
  /** Stops sending new requests (those under way finish). */
  stop(): void;
  readonly sent: number;
}

/**
 * Publishes `count` order.created events (or until stopped), `concurrency` at a time, each to one
 * of `targets()` that is up (round robin); with none up it waits for one. A request that gets no
 * answer is not retried: it is simply not accepted.
 */
export function publishLoad(
  targets: () => ChildApp[],
  { count, concurrency = 16, deliveries }: { count: number; concurrency?: number; deliveries?: number },
): PublishLoad {
  const accepted = new Map<string, number>();
  const rejected = new Map<number, number>();
  const rejectedBodies: Array<{ status: number; body: string }> = [];
  let next = 0;
  let stopped = false;
  const pick = async (): Promise<ChildApp> => {
    for (;;) {
      const up = targets().filter((app) => !app.exit);
      if (up.length > 0) return up[next % up.length];
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const lane = async (): Promise<void> => {
    while (!stopped && next < count) {
      const n = next++;
      const app = await pick();
      let status = 0;
      let body = '';
      try {
        const res = await app.api('/events', {
          method: 'POST',
          json: { type: 'order.created', data: orderData(n) },
          signal: AbortSignal.timeout(15_000),
        });
        status = res.status;
        body = await res.text();
      } catch {
        status = 0;
      }
      if (status === 202) {
        const published = JSON.parse(body) as { id: string; deliveries: number };
        if (deliveries !== undefined && published.deliveries !== deliveries)
          throw new Error(`event fanned out to ${published.deliveries} endpoints, not ${deliveries}`);
        accepted.set(published.id, Date.now());
      } else {
        rejected.set(status, (rejected.get(status) ?? 0) + 1);
        if (status !== 0 && rejectedBodies.length < 20) rejectedBodies.push({ status, body });
      }
    }
  };
  const done = Promise.all(Array.from({ length: concurrency }, () => lane())).then(() => undefined);
  return {
    accepted,
    rejected,
    rejectedBodies,
    done,
    stop: () => (stopped = true),
    get sent() {
      return next;
    },
  };
}

export interface DeliveryReport {
  /** Accepted event × subscribed path pairs that reached the receiver. */
  delivered: number;
  expected: number;
  missing: string[];
  /** Requests beyond the first for one (path, event id). */
  duplicates: number;
  /** When each (path, event id) first arrived. */
  firstArrival: Map<string, number>;
}

/** What the receiver got for the accepted events on each of `paths`. */
export function deliveryReport(receiver: Receiver, eventIds: Iterable<string>, paths: string[]): DeliveryReport {
  const seen = new Map<string, number>();
  const firstArrival = new Map<string, number>();
  let duplicates = 0;
  for (const request of receiver.requests) {
    if (!paths.includes(request.path)) continue;
    const key = `${request.path} ${String(request.headers['x-webhook-id'])}`;
    const times = seen.get(key) ?? 0;
    if (times > 0) duplicates++;
    else firstArrival.set(key, request.at);
    seen.set(key, times + 1);
  }
  const missing: string[] = [];
  let expected = 0;
  for (const id of eventIds) {
    for (const path of paths) {
      expected++;
      if (!seen.has(`${path} ${id}`)) missing.push(`${path} ${id}`);
    }
  }
  return { delivered: expected - missing.length, expected, missing, duplicates, firstArrival };
}
