import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An endpoint's content filter (docs/api.md#content-filters): `filter` is the text as given and
 * shown, `filter_path` the same parsed once, which the fan-out evaluates. `hookline_filter_matches`
 * is the one evaluation, shared by the fan-out and POST /webhooks/filter-test: a filter that
 * cannot be evaluated on an event (a datetime template PostgreSQL refuses, say) does not match it,
 * rather than failing a publish that may hold other stores' events.
 */
export class ContentFilters1796600000000 implements MigrationInterface {
  name = 'ContentFilters1796600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhooks
        ADD COLUMN IF NOT EXISTS filter text CONSTRAINT webhooks_filter_size CHECK (octet_length(filter) <= 1024),
        ADD COLUMN IF NOT EXISTS filter_path jsonpath GENERATED ALWAYS AS (filter::jsonpath) STORED`);
    // The _tz variant: comparing a date with a timestamp with time zone converts rather than raises.
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION hookline_filter_matches(envelope jsonb, filter jsonpath) RETURNS boolean
      LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
      BEGIN
        RETURN jsonb_path_match_tz(envelope, filter, '{}', true) IS TRUE;
      EXCEPTION WHEN OTHERS THEN
        RETURN false;
      END $$`);
    // Whether the fan-out parses the events at all: no endpoint with a filter, no parsing.
    await queryRunner.query(`CREATE INDEX IF NOT EXISTS webhooks_filtered_idx ON webhooks (id) WHERE filter IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX IF EXISTS webhooks_filtered_idx`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS hookline_filter_matches(jsonb, jsonpath)`);
    await queryRunner.query(`ALTER TABLE webhooks DROP COLUMN IF EXISTS filter_path, DROP COLUMN IF EXISTS filter`);
  }
}
