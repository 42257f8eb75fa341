import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a person last started a delivery's cycle again (a retry, retry-failed). A delivery expires
 * MAX_DELIVERY_AGE after its event or after this, whichever is later, so a retry of an old
 * delivery gets a whole age of its own. Nullable without a default: no row is rewritten.
 */
export class DeliveryRestartedAt1796200000000 implements MigrationInterface {
  name = 'DeliveryRestartedAt1796200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS restarted_at timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE deliveries DROP COLUMN IF EXISTS restarted_at`);
  }
}
