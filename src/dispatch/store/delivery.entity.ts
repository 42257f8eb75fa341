import { Column, Entity, PrimaryColumn } from 'typeorm';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One event to one endpoint, as the view `deliveries` shows it: pending ones from `delivery_queue`,
 * ended ones from `delivery_log` (docs/architecture.md, "Storage"). While `pending`,
 * `nextAttemptAt` is when it is due, or the end of the lease of the worker holding it (`leaseToken`),
 * so a crashed worker's claim simply becomes due again when the lease ends. Every write names its
 * table (the `*.sql.ts` statements); this entity is read only.
 */
@Entity('deliveries')
export class Delivery {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @PrimaryColumn({ name: 'store_id', type: 'text' })
  storeId: string;

  @Column({ name: 'event_id', type: 'text' })
  eventId: string;

  @Column({ name: 'webhook_id', type: 'text' })
  webhookId: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType: string;

  @Column({ type: 'text' })
  status: DeliveryStatus;

  /** Attempts claimed over the delivery's life (every cycle). */
  @Column({ name: 'attempt_count', type: 'integer' })
  attemptCount: number;

  /** Attempts claimed in the current cycle (a manual retry starts a new one). */
  @Column({ name: 'cycle_attempts', type: 'integer' })
  cycleAttempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  /** Created for an ordered endpoint: goes out only after the endpoint's earlier deliveries end. */
  @Column({ type: 'boolean' })
  ordered: boolean;

  @Column({ name: 'lease_token', type: 'text', nullable: true })
  leaseToken: string | null;

  @Column({ name: 'last_status_code', type: 'integer', nullable: true })
  lastStatusCode: number | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** When a person last started a new cycle (a retry): the delivery's age counts from then too (DeliveryExpiry). */
  @Column({ name: 'restarted_at', type: 'timestamptz', nullable: true })
  restartedAt: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
