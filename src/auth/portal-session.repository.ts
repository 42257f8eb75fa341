import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { rowsOf } from '../database/sql';
import type { PortalBranding, PortalCapability } from './portal-capabilities';
import { PortalSession } from './portal-session.entity';

export interface NewPortalSession {
  id: string;
  storeId: string;
  capabilities: PortalCapability[];
  webhookIds: string[] | null;
  branding: PortalBranding | null;
  tokenHash: string;
  codeHash: string;
  expiresInSeconds: number;
}

/** A session as the guard and the exchange need it, judged by the database's clock. */
export interface PortalSessionState {
  id: string;
  storeId: string;
  capabilities: PortalCapability[];
  webhookIds: string[] | null;
  branding: PortalBranding | null;
  expiresAt: Date;
  /** Why it no longer works; null while it does. */
  ended: 'revoked' | 'expired' | null;
}

const STATE = `id, store_id AS "storeId", capabilities, webhook_ids AS "webhookIds", branding, expires_at AS "expiresAt",
  CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN expires_at <= now() THEN 'expired' END AS ended`;

/** Sessions are kept this long after they end, so that their ending can still be told apart from a wrong secret. */
const KEPT_AFTER_END = '1 day';

@Injectable()
export class PortalSessionRepository {
  constructor(@InjectRepository(PortalSession) private readonly sessions: Repository<PortalSession>) {}

  /** Inserts the session, its expiry counted from the database's clock. */
  async insert(session: NewPortalSession): Promise<{ expiresAt: Date }> {
    const rows: Array<{ expiresAt: Date }> = await this.sessions.query(
      `INSERT INTO portal_sessions (id, store_id, capabilities, webhook_ids, branding, token_hash, code_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))
       RETURNING expires_at AS "expiresAt"`,
      [
        session.id,
        session.storeId,
        session.capabilities,
        session.webhookIds,
        session.branding === null ? null : JSON.stringify(session.branding),
        session.tokenHash,
        session.codeHash,
        session.expiresInSeconds,
      ],
    );
    return rows[0];
  }

  /** Forgets sessions that ended more than a day ago (none lives longer than a day), so the table stays small. */
  async purgeEnded(): Promise<void> {
    await this.sessions.query(`DELETE FROM portal_sessions WHERE expires_at < now() - interval '${KEPT_AFTER_END}'`);
  }

  async findByToken(tokenHash: string): Promise<PortalSessionState | undefined> {
    const rows: PortalSessionState[] = await this.sessions.query(`SELECT ${STATE} FROM portal_sessions WHERE token_hash = $1`, [tokenHash]);
    return rows[0];
  }

  /** The session `id` if `cookieHash` is the cookie its code was exchanged for. */
  async findByCookie(id: string, cookieHash: string): Promise<PortalSessionState | undefined> {
    const rows: PortalSessionState[] = await this.sessions.query(
      `SELECT ${STATE} FROM portal_sessions WHERE id = $1 AND cookie_hash = $2`,
      [id, cookieHash],
    );
    return rows[0];
  }

  /**
   * Spends the code of a session that still works, binding the session to `cookieHash`; in one
   * statement, so that of two browsers opening one link at once only one signs in.
   */
  async exchangeCode(codeHash: string, cookieHash: string): Promise<PortalSessionState | undefined> {
    const rows = await rowsOf<PortalSessionState>(
      this.sessions.manager,
      `UPDATE portal_sessions SET code_used_at = now(), cookie_hash = $2
       WHERE code_hash = $1 AND code_used_at IS NULL AND revoked_at IS NULL AND expires_at > now()
       RETURNING ${STATE}`,
      [codeHash, cookieHash],
    );
    return rows[0];
  }

  /** The session of a code, used or not: why an exchange failed. */
  async findByCode(codeHash: string): Promise<(PortalSessionState & { codeUsed: boolean }) | undefined> {
    const rows: Array<PortalSessionState & { codeUsed: boolean }> = await this.sessions.query(
      `SELECT ${STATE}, code_used_at IS NOT NULL AS "codeUsed" FROM portal_sessions WHERE code_hash = $1`,
      [codeHash],
    );
    return rows[0];
  }

  /** Ends the session now (an ended one stays ended); false when the store has no such session. */
  async revokeInStore(storeId: string, id: string): Promise<boolean> {
    const rows = await rowsOf<{ id: string }>(
      this.sessions.manager,
      `UPDATE portal_sessions SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND store_id = $2 RETURNING id`,
      [id, storeId],
    );
    return rows.length > 0;
  }
}
