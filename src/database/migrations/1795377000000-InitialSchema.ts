import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The whole schema of the first release: stores (tenants), their API keys, webhook endpoints,
 * events, deliveries and the attempts of each delivery, plus a small key/value table.
 *
 * Ids are prefixed, time-ordered strings (see common/ids.ts), so keyset pagination can order by id.
 * Deliveries carry their own store id so that every query is scoped without a join.
 */
export class InitialSchema1795377000000 implements MigrationInterface {
  name = 'InitialSchema1795377000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE stores (
        id          text PRIMARY KEY,
        name        text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`INSERT INTO stores (id, name) VALUES ('st_default', 'default')`);

    await queryRunner.query(`
      CREATE TABLE api_keys (
        id            text PRIMARY KEY,
        store_id      text NOT NULL REFERENCES stores (id),
        name          text NOT NULL,
        scopes        text[] NOT NULL,
        key_hash      text NOT NULL UNIQUE,
        created_at    timestamptz NOT NULL DEFAULT now(),
        last_used_at  timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX api_keys_store_idx ON api_keys (store_id, id)`);

    await queryRunner.query(`
      CREATE TABLE webhooks (
        id                text PRIMARY KEY,
        store_id          text NOT NULL REFERENCES stores (id),
        name              text NOT NULL,
        url               text NOT NULL,
        events            text[] NOT NULL,
        is_active         boolean NOT NULL DEFAULT true,
        secret_encrypted  text NOT NULL,
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX webhooks_store_idx ON webhooks (store_id, id)`);

    await queryRunner.query(`
      CREATE TABLE events (
        id               text PRIMARY KEY,
        store_id         text NOT NULL REFERENCES stores (id),
        type             text NOT NULL,
        body             text NOT NULL,
        idempotency_key  text,
        created_at       timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX events_store_idx ON events (store_id, id)`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX events_idempotency_idx ON events (store_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE deliveries (
        id                text PRIMARY KEY,
        store_id          text NOT NULL REFERENCES stores (id),
        event_id          text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
        webhook_id        text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_type        text NOT NULL,
        status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempt_count     integer NOT NULL DEFAULT 0,
        cycle_attempts    integer NOT NULL DEFAULT 0,
        next_attempt_at   timestamptz,
        lease_token       text,
        last_status_code  integer,
        last_error        text,
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now()
      )`);
    // The claim query reads only this partial index, so it stays as fast with millions of
    // finished deliveries as with none.
    await queryRunner.query(`CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE status = 'pending'`);
    await queryRunner.query(`CREATE INDEX deliveries_webhook_idx ON deliveries (webhook_id, id)`);
    await queryRunner.query(`CREATE INDEX deliveries_event_idx ON deliveries (event_id)`);

    await queryRunner.query(`
      CREATE TABLE delivery_attempts (
        delivery_id    text NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
        number         integer NOT NULL,
        started_at     timestamptz NOT NULL,
        duration_ms    integer NOT NULL,
        status_code    integer,
        error          text,
        response_body  text,
        PRIMARY KEY (delivery_id, number)
      )`);

    await queryRunner.query(`
      CREATE TABLE settings (
        key    text PRIMARY KEY,
        value  text NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['settings', 'delivery_attempts', 'deliveries', 'events', 'webhooks', 'api_keys', 'stores']) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
