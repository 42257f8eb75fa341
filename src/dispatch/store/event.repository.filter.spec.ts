import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { newId } from '../../common/ids';
import { loadConfig } from '../../config/app-config';
import { dataSourceOptions } from '../../database/data-source-options';
import { runMigrationsLocked } from '../../database/run-migrations';
import { SqlPool } from '../../database/sql-pool';
import { DeliveryRepository, type HandOff } from './delivery.repository';
import { EventRepository, type NewEvent } from './event.repository';

const HAND_OFF: HandOff = {
  limit: 1_000,
  leaseMs: 30_000,
  leaseToken: 'worker-1',
  excluded: [],
  partial: new Map(),
  perEndpoint: 1_000,
  excludedStores: [],
  partialStores: new Map(),
  perStore: 1_000,
};

/** An order.created of `total` in `currency`, as the publisher stores it. */
function order(n: number, total: number, currency: string, idempotencyKey?: string): NewEvent {
  const createdAt = new Date();
  const id = newId('evt', createdAt.getTime());
  const envelope = { id, type: 'order.created', timestamp: createdAt.toISOString(), data: { id: `ord_${n}`, total, currency } };
  return { id, storeId: 'st_default', type: 'order.created', body: JSON.stringify(envelope), createdAt, idempotencyKey };
}

/** The fan-out's statements with content filters, against a real PostgreSQL: which endpoints each event reaches. */
describe('EventRepository fan-out with content filters', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sqlPool: SqlPool;
  let pool: Pool;
  let events: EventRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(dataSource);
    sqlPool = new SqlPool(loadConfig({}).with({ databaseUrl: db.url }));
    pool = new Pool({ connectionString: db.url, max: 1 });
    events = new EventRepository(dataSource, sqlPool);
    const endpoints: Array<[string, string | null, boolean]> = [
      ['wh_all', null, false],
      ['wh_eur', '$.data.currency == "EUR"', false],
      ['wh_big', '$.data.total > 10000', true],
      // What validation refuses, written here directly: evaluating them must not fail a publish.
      ['wh_raises', '$.timestamp.datetime("XYZ Q") < "2030-01-01".datetime() || $.data.total > $min', false],
      ['wh_number', '$.data.total', false],
    ];
    for (const [id, filter, ordered] of endpoints) {
      await db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted, ordered, filter)
         VALUES ($1, 'st_default', $1, 'https://x.test/', '{order.created,webhook.delivery_failed}', 'sealed', $2, $3)`,
        [id, ordered, filter],
      );
    }
  });

  afterAll(async () => {
    await pool.end();
    await sqlPool.end();
    await dataSource.destroy();
    await db.drop();
  });

  beforeEach(() => db.query('DELETE FROM delivery_queue; DELETE FROM delivery_log'));

  /** The endpoints each event reached, by event id. */
  async function reached(): Promise<Map<string, string[]>> {
    const rows = await db.query<{ event_id: string; webhooks: string[] }>(
      `SELECT event_id, array_agg(webhook_id ORDER BY webhook_id) AS webhooks FROM deliveries GROUP BY event_id`,
    );
    return new Map(rows.map((row) => [row.event_id, row.webhooks]));
  }

  const expected = (total: number, currency: string): string[] =>
    ['wh_all', ...(total > 10_000 ? ['wh_big'] : []), ...(currency === 'EUR' ? ['wh_eur'] : [])].sort();

  it('sends a single event only to the endpoints whose filter it matches', async () => {
    const big = order(1, 20_000, 'USD');
    const eur = order(2, 500, 'EUR');
    expect(await events.publish(big, 0)).toEqual({ deliveries: 2 });
    expect(await events.publish(eur, 0)).toEqual({ deliveries: 2 });
    await dataSource.transaction(async (manager) =>
      expect(await events.publish(order(3, 1, 'GBP'), 0, manager)).toEqual({ deliveries: 1 }),
    );
    const byEvent = await reached();
    expect(byEvent.get(big.id)).toEqual(['wh_all', 'wh_big']);
    expect(byEvent.get(eur.id)).toEqual(['wh_all', 'wh_eur']);
  });

  it.each([
    ['without keys, straight to the insert', false, false],
    ['with idempotency keys', true, false],
    ['with a hand-off to the publishing worker', false, true],
    ['with keys and a hand-off', true, true],
  ])('filters a batch of 1,000 in one statement, %s', async (_case, withKeys, handOff) => {
    const batch = Array.from({ length: 1_000 }, (_, i) =>
      order(i, (i % 4) * 5_000, i % 3 === 0 ? 'EUR' : 'USD', withKeys ? `key-${handOff}-${i}` : undefined),
    );
    const published = await events.publishMany(batch, 0, handOff ? HAND_OFF : undefined);
    const byEvent = await reached();
    batch.forEach((event, i) => {
      const want = expected((i % 4) * 5_000, i % 3 === 0 ? 'EUR' : 'USD');
      expect([event.id, published.counts.get(event.id)]).toEqual([event.id, want.length]);
      expect([event.id, byEvent.get(event.id)]).toEqual([event.id, want]);
    });
    if (handOff) {
      // The ordered endpoint's deliveries wait for a claim; the others' are leased to the worker.
      expect(published.leased.length).toBeGreaterThan(0);
      expect(published.leased.every((delivery) => delivery.webhookId !== 'wh_big')).toBe(true);
    }
  });

  it('sends webhook.delivery_failed only to the endpoints whose filter it matches', async () => {
    await db.query(`UPDATE webhooks SET filter = '$.data.endpointId == "wh_eur"' WHERE id = 'wh_big'`);
    const delivered = order(9, 1, 'EUR');
    await events.publish(delivered, 0);
    await db.query(
      `UPDATE delivery_queue SET lease_token = 'worker', lease_until = now() + interval '1 minute', attempt_count = 1, cycle_attempts = 1
       WHERE webhook_id = 'wh_eur'`,
    );
    const [{ id: deliveryId }] = await db.query<{ id: string }>(`SELECT id FROM deliveries WHERE webhook_id = 'wh_eur'`);
    const at = new Date();
    const noticeId = newId('evt', at.getTime());
    const notice = {
      id: noticeId,
      type: 'webhook.delivery_failed',
      timestamp: at.toISOString(),
      data: { endpointId: 'wh_eur', deliveryId, total: 0 },
    };
    await new DeliveryRepository(pool).recordOutcomes([
      {
        deliveryId,
        leaseToken: 'worker',
        attempt: { number: 1, trigger: 'scheduled', startedAt: at, durationMs: 5, statusCode: 500, error: 'HTTP 500', responseBody: null },
        status: 'failed',
        retryDelayMs: 0,
        decidedAt: Date.now(),
        lastStatusCode: 500,
        lastError: 'HTTP 500',
        failureEvent: { id: noticeId, createdAt: at, body: JSON.stringify(notice) },
      },
    ]);
    // wh_eur's filter wants EUR; wh_raises and wh_number match nothing; wh_big's now names the endpoint.
    expect((await reached()).get(noticeId)).toEqual(['wh_all', 'wh_big']);
    await db.query(`UPDATE webhooks SET filter = '$.data.total > 10000' WHERE id = 'wh_big'`);
  });
});
