import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-endpoint flow control: a rate limit shared by every worker and ordered delivery.
 *
 * - `webhooks.rate_limit_per_second` (null: none) and `webhooks.ordered`.
 * - `deliveries.ordered`: whether the delivery was created for an ordered endpoint. Its partial
 *   index holds only pending ordered deliveries, so deliveries of other endpoints pay nothing for it.
 * - `endpoint_rate_windows`: the attempts requested of a rate-limited endpoint in the current
 *   second, one row per endpoint, locked by the claim that counts against it.
 *
 * Constant defaults add the columns without rewriting the tables.
 */
export class EndpointFlowControl1795700000000 implements MigrationInterface {
  name = 'EndpointFlowControl1795700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhooks
        ADD COLUMN rate_limit_per_second integer CONSTRAINT webhooks_rate_limit_check CHECK (rate_limit_per_second BETWEEN 1 AND 10000),
        ADD COLUMN ordered boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`ALTER TABLE deliveries ADD COLUMN ordered boolean NOT NULL DEFAULT false`);
    await queryRunner.query(
      `CREATE INDEX deliveries_ordered_idx ON deliveries (webhook_id, event_id) WHERE status = 'pending' AND ordered`,
    );
    await queryRunner.query(`
      CREATE TABLE endpoint_rate_windows (
        webhook_id    text PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
        window_start  timestamptz NOT NULL,
        requests      integer NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE endpoint_rate_windows`);
    await queryRunner.query(`DROP INDEX deliveries_ordered_idx`);
    await queryRunner.query(`ALTER TABLE deliveries DROP COLUMN ordered`);
    await queryRunner.query(`ALTER TABLE webhooks DROP COLUMN rate_limit_per_second, DROP COLUMN ordered`);
  }
}
