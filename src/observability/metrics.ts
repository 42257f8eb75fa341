import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The reasons the disabled-endpoints gauge always shows, 0 included (an inactive endpoint without one was made so by a person). */
const DISABLED_REASONS = ['manual', 'gone', 'failing'];

/**
 * One registry per application instance (tests boot several apps in one process), holding the
 * process metrics, HTTP request metrics and the dispatcher's delivery metrics.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests served, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly deliveryAttempts = new Counter({
    name: 'hookline_delivery_attempts_total',
    help: 'Delivery attempts made, by outcome (success, failure)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly deliveryAttemptDuration = new Histogram({
    name: 'hookline_delivery_attempt_duration_seconds',
    help: 'Duration of one delivery attempt, from connect to response',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly deliveriesFinished = new Counter({
    name: 'hookline_deliveries_finished_total',
    help: 'Deliveries that reached a final status (succeeded, failed)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  /** Counted by the module that owns the endpoints, when /metrics is read (see countDisabledEndpointsWith). */
  private countDisabled?: () => Promise<Array<{ reason: string | null; count: number }>>;

  readonly endpointsDisabled = new Gauge({
    name: 'hookline_endpoints_disabled',
    help: 'Inactive webhook endpoints, by why they were disabled (manual, gone, failing)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
    collect: async () => {
      if (!this.countDisabled) return;
      // With the database away the last values stay: /metrics answers all the same.
      const counts = await this.countDisabled().catch(() => undefined);
      if (!counts) return;
      const byReason = new Map<string, number>(DISABLED_REASONS.map((reason) => [reason, 0]));
      for (const { reason, count } of counts) byReason.set(reason ?? 'manual', (byReason.get(reason ?? 'manual') ?? 0) + count);
      for (const [reason, count] of byReason) this.endpointsDisabled.set({ reason }, count);
    },
  });

  readonly eventsPublished = new Counter({
    name: 'hookline_events_published_total',
    help: 'Events accepted for delivery',
    registers: [this.registry],
  });

  readonly retentionPartitionsDropped = new Counter({
    name: 'hookline_retention_partitions_dropped_total',
    help: 'Daily partitions dropped by retention, by table',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  readonly retentionRowsRemoved = new Counter({
    name: 'hookline_retention_rows_removed_total',
    help: 'Rows removed with the partitions retention dropped, by table',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  readonly deliveriesExpired = new Counter({
    name: 'hookline_deliveries_expired_total',
    help: 'Deliveries ended failed because they were still pending MAX_DELIVERY_AGE after their event',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** How the disabled endpoints are counted when /metrics is read (the webhooks module registers it). */
  countDisabledEndpointsWith(count: () => Promise<Array<{ reason: string | null; count: number }>>): void {
    this.countDisabled = count;
  }
}
