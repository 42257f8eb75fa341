/** The longest a success goes unwritten (unless the endpoint failed meanwhile): a fraction of the disable threshold, at most this. */
export const MAX_STAMP_INTERVAL_MS = 60_000;

/** Endpoints remembered at most; past it, the stale ones are forgotten (they are written again, no harm). */
const MAX_REMEMBERED = 50_000;

/**
 * Which successful deliveries are stamped: a stamp clears the endpoint's failing count in
 * `endpoint_health`, which would otherwise get it disabled, and writes nothing when no count runs.
 * Checking every success would cost the busiest path a lookup per delivery; once per endpoint per
 * interval, and at once after this process saw it fail, costs nothing measurable. Another process's failures are not known here, so a success may
 * go unwritten for up to one interval after them: the threshold is checked against the disable time
 * plus {@link stampIntervalMs}, so that an endpoint is never disabled early, at most that much late.
 */
export class EndpointHealth {
  readonly stampIntervalMs: number;
  private readonly stampedAt = new Map<string, number>();

  constructor(disableAfterMs: number) {
    this.stampIntervalMs = Math.min(MAX_STAMP_INTERVAL_MS, Math.ceil(disableAfterMs / 10));
  }

  /** A delivery to `webhookId` succeeded: whether to write it. */
  shouldStamp(webhookId: string, now = Date.now()): boolean {
    const last = this.stampedAt.get(webhookId);
    if (last !== undefined && now - last < this.stampIntervalMs) return false;
    if (this.stampedAt.size >= MAX_REMEMBERED) this.forgetStale(now);
    this.stampedAt.set(webhookId, now);
    return true;
  }

  /** A delivery to `webhookId` failed: its next success is written, whatever the interval. */
  failed(webhookId: string): void {
    this.stampedAt.delete(webhookId);
  }

  private forgetStale(now: number): void {
    for (const [webhookId, at] of this.stampedAt) if (now - at >= this.stampIntervalMs) this.stampedAt.delete(webhookId);
    if (this.stampedAt.size >= MAX_REMEMBERED) this.stampedAt.clear();
  }
}
