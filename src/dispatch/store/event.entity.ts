import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An accepted event: the envelope's exact bytes, stored once for every attempt of every delivery. */
@Entity('events')
export class Event {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @PrimaryColumn({ name: 'store_id', type: 'text' })
  storeId: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ type: 'text' })
  body: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** The W3C traceparent of the span that published it; null when tracing was off (docs/operations.md#tracing). */
  @Column({ type: 'text', nullable: true })
  traceparent: string | null;
}
