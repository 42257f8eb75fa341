import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The W3C traceparent of the span that published an event (docs/operations.md#tracing), so that
 * each attempt, made later and perhaps by another process, is a child of it. NULL when tracing
 * was off: adding a nullable column without a default rewrites no partition.
 */
export class EventTraceparent1796900000000 implements MigrationInterface {
  name = 'EventTraceparent1796900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE events ADD COLUMN IF NOT EXISTS traceparent text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE events DROP COLUMN IF EXISTS traceparent`);
  }
}
