import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How Hookline authenticates itself to an endpoint: `auth` and `tls` hold what the API shows (the
 * method and its non-secret fields, the certificates' summaries); the `_encrypted` columns hold the
 * whole credentials sealed, secret parts included, read only to send.
 */
export class ReceiverAuthentication1796700000000 implements MigrationInterface {
  name = 'ReceiverAuthentication1796700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhooks
        ADD COLUMN auth jsonb,
        ADD COLUMN auth_encrypted text,
        ADD COLUMN tls jsonb,
        ADD COLUMN tls_encrypted text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE webhooks DROP COLUMN auth, DROP COLUMN auth_encrypted, DROP COLUMN tls, DROP COLUMN tls_encrypted`,
    );
  }
}
