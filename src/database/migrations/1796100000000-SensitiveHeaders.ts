import { MigrationInterface, QueryRunner } from 'typeorm';

/** The settings key that asks the next start to seal the sensitive header values stored in clear. */
export const SENSITIVE_HEADERS_TO_SEAL = 'sensitive_headers_to_seal';

/**
 * A column for the sealed values of an endpoint's sensitive headers. Sealing needs
 * SECRET_ENCRYPTION_KEY, which migrations do not have: when any endpoint has headers, a settings
 * row asks the webhooks module to seal them at its start (SensitiveHeaderSealer), before it serves
 * or delivers, and that removes the row when done.
 */
export class SensitiveHeaders1796100000000 implements MigrationInterface {
  name = 'SensitiveHeaders1796100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE webhooks ADD COLUMN IF NOT EXISTS sensitive_headers_encrypted text`);
    await queryRunner.query(
      `INSERT INTO settings (key, value) SELECT $1, 'true' WHERE EXISTS (SELECT 1 FROM webhooks WHERE headers <> '{}')
       ON CONFLICT (key) DO NOTHING`,
      [SENSITIVE_HEADERS_TO_SEAL],
    );
  }

  /** Forgets the sensitive values: they were held only sealed, and this cannot open them. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM settings WHERE key = $1`, [SENSITIVE_HEADERS_TO_SEAL]);
    await queryRunner.query(`ALTER TABLE webhooks DROP COLUMN IF EXISTS sensitive_headers_encrypted`);
  }
}
