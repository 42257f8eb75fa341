import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A store (tenant): every key, webhook, event and delivery belongs to exactly one. */
@Entity('stores')
export class Store {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
