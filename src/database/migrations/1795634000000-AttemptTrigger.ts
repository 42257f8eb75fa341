import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What started each attempt: `manual` for the first attempt of a cycle a person started (a retry
 * through the API or the dashboard), `scheduled` for every other. Attempts recorded before this
 * column existed cannot be told apart and read `scheduled`. A constant default adds the column
 * without rewriting the table.
 */
export class AttemptTrigger1795634000000 implements MigrationInterface {
  name = 'AttemptTrigger1795634000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE delivery_attempts
        ADD COLUMN trigger text NOT NULL DEFAULT 'scheduled' CONSTRAINT delivery_attempts_trigger_check CHECK (trigger IN ('scheduled', 'manual'))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE delivery_attempts DROP COLUMN trigger`);
  }
}
