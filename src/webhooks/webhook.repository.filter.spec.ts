import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import { loadConfig } from '../config/app-config';
import { dataSourceOptions } from '../database/data-source-options';
import { runMigrationsLocked } from '../database/run-migrations';
import { SqlPool } from '../database/sql-pool';
import { Webhook } from './webhook.entity';
import { WebhookRepository } from './webhook.repository';

const ORDER = {
  id: 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t',
  type: 'order.created',
  timestamp: '2026-11-22T10:00:00.000Z',
  data: { id: 'ord_8c2f41d7', status: 'PENDING', total: 14998, currency: 'EUR', tags: ['vip', 'b2b'] },
};

/** Content filters as PostgreSQL parses and evaluates them: the judge of what a filter means. */
describe('WebhookRepository content filters', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let pool: SqlPool;
  let repository: WebhookRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2, [Webhook])).initialize();
    await runMigrationsLocked(dataSource);
    pool = new SqlPool(loadConfig({}).with({ databaseUrl: db.url }));
    repository = new WebhookRepository(dataSource.getRepository(Webhook), pool);
  });

  afterAll(async () => {
    await pool.end();
    await dataSource.destroy();
    await db.drop();
  });

  it('parses a filter into PostgreSQL’s own printing of it', async () => {
    await expect(repository.parseFilter('$.data.total > 10000 && $.data.currency == "EUR"')).resolves.toEqual({
      canonical: '($."data"."total" > 10000 && $."data"."currency" == "EUR")',
    });
  });

  it.each([
    ['$.data.total >', 'syntax error at end of jsonpath input'],
    ['$.data.email like_regex "("', 'invalid regular expression: parentheses () not balanced'],
    ['@ == 1', '@ is not allowed in root expressions'],
    ['', 'invalid input syntax for type jsonpath: ""'],
  ])('answers the parser’s message for %j', async (filter, message) => {
    await expect(repository.parseFilter(filter)).resolves.toEqual({ refusal: message });
  });

  it.each([
    ['$.data.total > 10000 && $.data.currency == "EUR"', true],
    ['$.data.total > 20000', false],
    ['$.data.tags[*] == "vip"', true],
    ['$.data.status starts with "PEND"', true],
    ['exists($.data.coupon)', false],
    ['$.data.coupon == "X"', false],
    ['$.type == "order.created" || $.type == "order.cancelled"', true],
  ])('evaluates %j as publishing does: %s', async (filter, matches) => {
    await expect(repository.matchesFilter(filter, ORDER)).resolves.toEqual({ matches });
  });

  it('does not match where the filter yields no single boolean', async () => {
    await expect(repository.matchesFilter('$.data.total', ORDER)).resolves.toEqual({ matches: false });
    await expect(repository.matchesFilter('$.data.tags', ORDER)).resolves.toEqual({ matches: false });
  });

  it('does not match, rather than fail, where PostgreSQL cannot evaluate the filter on the event', async () => {
    // A template PostgreSQL refuses only when it runs, and a variable no event supplies.
    await expect(repository.matchesFilter('$.timestamp.datetime("XYZ Q") < "2030-01-01".datetime()', ORDER)).resolves.toEqual({
      matches: false,
    });
    await expect(repository.matchesFilter('$.data.total > $min', ORDER)).resolves.toEqual({ matches: false });
    // A date against a time stamp with time zone converts instead of raising.
    await expect(repository.matchesFilter('"2026-11-22T10:00:00+00:00".datetime() > "2026-01-01".datetime()', ORDER)).resolves.toEqual({
      matches: true,
    });
  });

  it('refuses an event the database cannot hold as jsonb', async () => {
    await expect(repository.matchesFilter('$.data.total > 1', { data: { note: 'a\u0000b' } })).resolves.toEqual({
      refusal: expect.stringMatching(/unsupported Unicode escape sequence/),
    });
  });

  it('keeps the parsed filter beside the text, and refuses more than 1 KiB', async () => {
    await db.query(`INSERT INTO stores (id, name) VALUES ('st_f', 'f')`);
    const insert = (id: string, filter: string): Promise<unknown> =>
      db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, is_active, secret_encrypted, headers, ordered, filter)
         VALUES ($1, 'st_f', 'f', 'https://x.test/', '{order.created}', true, 's', '{}', false, $2)`,
        [id, filter],
      );
    await insert('wh_f1', '$.data.total>1');
    const [row] = await db.query<{ path: string }>(`SELECT filter_path::text AS path FROM webhooks WHERE id = 'wh_f1'`);
    expect(row.path).toBe('($."data"."total" > 1)');
    await expect(insert('wh_f2', `$.data.note == "${'x'.repeat(1020)}"`)).rejects.toThrow(/webhooks_filter_size/);
  });
});
