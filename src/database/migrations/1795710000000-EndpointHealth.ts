import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What dispatch needs to disable an endpoint that keeps failing (docs/operations.md): per
 * endpoint, when an attempt last succeeded (written at most once a minute or so, not per delivery),
 * since when its deliveries have been failing and how many ended `failed` since then. A row is
 * written only when a delivery ends or a success is stamped, never read on the delivery path.
 */
export class EndpointHealth1795710000000 implements MigrationInterface {
  name = 'EndpointHealth1795710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE endpoint_health (
        webhook_id text PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
        last_success_at timestamptz,
        failing_since timestamptz,
        failures integer NOT NULL DEFAULT 0
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE endpoint_health`);
  }
}
