import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pending deliveries of each store in due order, beside the due index of all stores: a claim
 * takes stores in turn, each from its own range, so that one store's backlog is never read to
 * reach another's (docs/scaling.md, "Fair dispatch").
 */
export class DeliveriesDueByStore1796400000000 implements MigrationInterface {
  name = 'DeliveriesDueByStore1796400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS deliveries_store_due_idx ON deliveries (store_id, next_attempt_at) WHERE status = 'pending'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS deliveries_store_due_idx`);
  }
}
