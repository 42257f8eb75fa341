import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Scope } from './scopes';

@Entity('api_keys')
export class ApiKey {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'store_id', type: 'text' })
  storeId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', array: true })
  scopes: Scope[];

  /** SHA-256 of the key text; the text itself is never stored. */
  @Column({ name: 'key_hash', type: 'text', select: false })
  keyHash: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
