import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The due index of all stores keeps only the pending deliveries no worker holds. nextDueAt reads
 * it (a lease that runs out is the one-second sweep's to find), and a claim, which also takes
 * deliveries whose lease ran out, can no longer be planned on it instead of each store's range of
 * deliveries_store_due_idx: with the statistics of today's partition behind, a generic plan read
 * the whole of that partition's due index for every store (docs/scaling.md, "Fair dispatch").
 * A claim's lease no longer writes an entry into it either.
 */
export class DueIndexOfUnleased1796400000001 implements MigrationInterface {
  name = 'DueIndexOfUnleased1796400000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS deliveries_unleased_due_idx ON deliveries (next_attempt_at) WHERE status = 'pending' AND lease_token IS NULL`,
    );
    await queryRunner.query(`DROP INDEX IF EXISTS deliveries_due_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS deliveries_due_idx ON deliveries (next_attempt_at) WHERE status = 'pending'`);
    await queryRunner.query(`DROP INDEX IF EXISTS deliveries_unleased_due_idx`);
  }
}
