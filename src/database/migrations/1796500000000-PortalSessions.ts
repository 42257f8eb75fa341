import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Portal sessions: a store's dashboard opened from a link, without an API key
 * (docs/api.md#portal-links). The token, the link's one-time code and the browser's cookie are
 * kept only as SHA-256 hashes. Like `api_keys`, the table is found by a hash before the store is
 * known, so it is not keyed by store. The bootstrap key, which holds every scope, gets the new
 * `portal:write`.
 */
export class PortalSessions1796500000000 implements MigrationInterface {
  name = 'PortalSessions1796500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS portal_sessions (
        id            text PRIMARY KEY,
        store_id      text NOT NULL REFERENCES stores (id),
        capabilities  text[] NOT NULL,
        webhook_ids   text[],
        branding      jsonb,
        token_hash    text NOT NULL UNIQUE,
        code_hash     text NOT NULL UNIQUE,
        code_used_at  timestamptz,
        cookie_hash   text,
        created_at    timestamptz NOT NULL DEFAULT now(),
        expires_at    timestamptz NOT NULL,
        revoked_at    timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS portal_sessions_expires_idx ON portal_sessions (expires_at)`);
    await queryRunner.query(
      `UPDATE api_keys SET scopes = array_append(scopes, 'portal:write')
       WHERE id = 'key_bootstrap' AND NOT ('portal:write' = ANY (scopes))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`UPDATE api_keys SET scopes = array_remove(scopes, 'portal:write')`);
    await queryRunner.query(`DROP TABLE IF EXISTS portal_sessions`);
  }
}
