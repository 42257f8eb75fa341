import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops the index of deliveries by event. Every delivery's id starts with its event's time, so an
 * event's deliveries are found by a range of the primary key ('del_' and the event's ten time
 * digits) and filtered on event_id; the index cost every delivery an entry at its insert and one
 * more at each of the two updates that claim and end it (they change indexed columns, so they are
 * never HOT), for lookups the key range already serves.
 */
export class DeliveriesWithoutEventIndex1795900000000 implements MigrationInterface {
  name = 'DeliveriesWithoutEventIndex1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS deliveries_event_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX deliveries_event_idx ON deliveries (event_id)`);
  }
}
