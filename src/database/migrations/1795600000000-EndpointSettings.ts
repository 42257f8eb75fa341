import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-endpoint delivery settings (extra headers, an own retry schedule), the previous signing
 * secret while a rotation's overlap lasts, and why an endpoint was disabled.
 */
export class EndpointSettings1795600000000 implements MigrationInterface {
  name = 'EndpointSettings1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhooks
        ADD COLUMN headers jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN retry_schedule integer[],
        ADD COLUMN previous_secret_encrypted text,
        ADD COLUMN previous_secret_expires_at timestamptz,
        ADD COLUMN disabled_reason text,
        ADD COLUMN disabled_at timestamptz`);
    // The sweep that erases ended overlaps reads only the few endpoints in one.
    await queryRunner.query(
      `CREATE INDEX webhooks_previous_secret_idx ON webhooks (previous_secret_expires_at) WHERE previous_secret_expires_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX webhooks_previous_secret_idx`);
    await queryRunner.query(`
      ALTER TABLE webhooks
        DROP COLUMN headers, DROP COLUMN retry_schedule, DROP COLUMN previous_secret_encrypted,
        DROP COLUMN previous_secret_expires_at, DROP COLUMN disabled_reason, DROP COLUMN disabled_at`);
  }
}
