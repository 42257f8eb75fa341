import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * What started an attempt: `manual` for the first attempt of a cycle a person started (a retry),
 * `scheduled` for the first attempt of a delivery and every retry of the schedule.
 */
export const ATTEMPT_TRIGGERS = ['scheduled', 'manual'] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];

/** One HTTP attempt of a delivery, written before the retry decision is taken. */
@Entity('delivery_attempts')
export class DeliveryAttempt {
  @PrimaryColumn({ name: 'delivery_id', type: 'text' })
  deliveryId: string;

  @PrimaryColumn({ type: 'integer' })
  number: number;

  @PrimaryColumn({ name: 'store_id', type: 'text' })
  storeId: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ type: 'text' })
  trigger: AttemptTrigger;

  /** At most 4 KiB of the response body. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;
}
