import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EventType } from '../catalogue/event-catalogue';

/** A webhook endpoint of one store. The signing secret is stored only encrypted. */
@Entity('webhooks')
export class Webhook {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'store_id', type: 'text' })
  storeId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text', array: true })
  events: EventType[];

  @Column({ name: 'is_active', type: 'boolean' })
  isActive: boolean;

  /** AES-256-GCM ciphertext of the `whsec_…` secret (see SecretCipher). */
  @Column({ name: 'secret_encrypted', type: 'text', select: false })
  secretEncrypted: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
