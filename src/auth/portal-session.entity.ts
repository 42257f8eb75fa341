import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { PortalBranding, PortalCapability } from './portal-capabilities';

/**
 * A portal session: one store's dashboard opened from a link, without an API key. Its secrets
 * (token, the link's code, the browser's cookie) are kept only as SHA-256 hashes.
 */
@Entity('portal_sessions')
export class PortalSession {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'store_id', type: 'text' })
  storeId: string;

  @Column({ type: 'text', array: true })
  capabilities: PortalCapability[];

  /** Null: every endpoint of the store. */
  @Column({ name: 'webhook_ids', type: 'text', array: true, nullable: true })
  webhookIds: string[] | null;

  @Column({ type: 'jsonb', nullable: true })
  branding: PortalBranding | null;

  @Column({ name: 'token_hash', type: 'text', select: false })
  tokenHash: string;

  @Column({ name: 'code_hash', type: 'text', select: false })
  codeHash: string;

  @Column({ name: 'code_used_at', type: 'timestamptz', nullable: true })
  codeUsedAt: Date | null;

  @Column({ name: 'cookie_hash', type: 'text', nullable: true, select: false })
  cookieHash: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
