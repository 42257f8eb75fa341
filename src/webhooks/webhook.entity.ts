import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EventType } from '../catalogue/event-catalogue';
import type { ShownAuth, ShownTls } from './receiver-credentials';

/** Why an endpoint is inactive: a person's PUT, a 410 Gone, or failing for too long. */
export type DisabledReason = 'manual' | 'gone' | 'failing';

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

  /** The secret before the last rotation, sealed the same way, while its overlap lasts. */
  @Column({ name: 'previous_secret_encrypted', type: 'text', nullable: true, select: false })
  previousSecretEncrypted?: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;

  /**
   * Extra request headers of every attempt, by name; a sensitive header's value is null here and
   * sealed in `sensitiveHeadersEncrypted` (see sensitive-headers.ts).
   */
  @Column({ type: 'jsonb' })
  headers: Record<string, string | null>;

  /** AES-256-GCM ciphertext of the sensitive headers' values as `{name: value}` JSON; null when none. */
  @Column({ name: 'sensitive_headers_encrypted', type: 'text', nullable: true, select: false })
  sensitiveHeadersEncrypted?: string | null;

  /** How Hookline authenticates to the receiver, as shown (no secret part); the whole is sealed in `authEncrypted`. */
  @Column({ type: 'jsonb', nullable: true })
  auth: ShownAuth | null;

  @Column({ name: 'auth_encrypted', type: 'text', nullable: true, select: false })
  authEncrypted?: string | null;

  /** The client certificate for mutual TLS, summarised; certificate, key and authority are sealed in `tlsEncrypted`. */
  @Column({ type: 'jsonb', nullable: true })
  tls: ShownTls | null;

  @Column({ name: 'tls_encrypted', type: 'text', nullable: true, select: false })
  tlsEncrypted?: string | null;

  /** Delays before each attempt, or null for the deployment's RETRY_SCHEDULE_MS. */
  @Column({ name: 'retry_schedule', type: 'integer', array: true, nullable: true })
  retrySchedule: number[] | null;

  /** At most this many attempts a second, across every worker; null: no limit. */
  @Column({ name: 'rate_limit_per_second', type: 'integer', nullable: true })
  rateLimitPerSecond: number | null;

  /** Deliveries go one at a time, in event id order. */
  @Column({ type: 'boolean' })
  ordered: boolean;

  /** The content filter as given (a SQL/JSON path predicate); null: every event of its types. */
  @Column({ type: 'text', nullable: true })
  filter: string | null;

  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason: DisabledReason | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
