import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import { loadConfig } from '../config/app-config';
import { dataSourceOptions } from '../database/data-source-options';
import { runMigrationsLocked } from '../database/run-migrations';
import { SqlPool } from '../database/sql-pool';
import { Webhook } from './webhook.entity';
import { WebhookRepository } from './webhook.repository';

/** The per-store limit on creates, against a real PostgreSQL (its locks are the point). */
describe('WebhookRepository.insertWithinLimit', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let pool: SqlPool;
  let repository: WebhookRepository;
  let sequence = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 6, [Webhook])).initialize();
    await runMigrationsLocked(dataSource);
    pool = new SqlPool(loadConfig({}).with({ databaseUrl: db.url }));
    repository = new WebhookRepository(dataSource.getRepository(Webhook), pool);
    await db.query(`INSERT INTO stores (id, name) VALUES ('st_a', 'a'), ('st_b', 'b'), ('st_c', 'c')`);
  });

  afterAll(async () => {
    await pool.end();
    await dataSource.destroy();
    await db.drop();
  });

  function webhook(storeId: string): Omit<Webhook, 'createdAt' | 'updatedAt'> {
    const id = `wh_${++sequence}`;
    return {
      id,
      storeId,
      name: id,
      url: 'https://x.test/',
      events: ['order.created'],
      filter: null,
      isActive: true,
      secretEncrypted: 'sealed',
      previousSecretExpiresAt: null,
      headers: {},
      retrySchedule: null,
      rateLimitPerSecond: null,
      ordered: false,
      auth: null,
      tls: null,
      disabledReason: null,
      disabledAt: null,
    };
  }

  async function countIn(storeId: string): Promise<number> {
    const [{ count }] = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM webhooks WHERE store_id = $1', [storeId]);
    return count;
  }

  it('inserts up to the limit, then answers null and inserts nothing, counting each store apart', async () => {
    for (let i = 0; i < 2; i++) expect(await repository.insertWithinLimit(webhook('st_a'), 2)).toMatchObject({ storeId: 'st_a' });
    expect(await repository.insertWithinLimit(webhook('st_a'), 2)).toBeNull();
    expect(await countIn('st_a')).toBe(2);
    expect(await repository.insertWithinLimit(webhook('st_b'), 2)).toMatchObject({ storeId: 'st_b' });
  });

  it('returns the stored row, timestamps included', async () => {
    const stored = await repository.insertWithinLimit(webhook('st_b'), 10);
    expect(stored).toBeInstanceOf(Webhook);
    expect(stored!.createdAt).toBeInstanceOf(Date);
  });

  it('lets no two concurrent inserts both take the last place', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => repository.insertWithinLimit(webhook('st_c'), 3)));
    expect(results.filter((row) => row !== null)).toHaveLength(3);
    expect(await countIn('st_c')).toBe(3);
  });

  it('disables an active endpoint once among concurrent callers, telling the handlers what it is now', async () => {
    const stored = (await repository.insertWithinLimit(webhook('st_a'), 100))!;
    const told: Array<{ id: string; disabledReason: string | null; disabledAt: Date | null; name: string }> = [];
    const handler = async (_manager: unknown, endpoint: (typeof told)[number]) => {
      told.push(endpoint);
    };
    const results = await Promise.all(Array.from({ length: 5 }, () => repository.disable(stored.id, 'failing', [handler])));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(told).toEqual([
      expect.objectContaining({ id: stored.id, name: stored.name, disabledReason: 'failing', disabledAt: expect.any(Date) }),
    ]);
    expect(await repository.countDisabled()).toEqual([{ reason: 'failing', count: 1 }]);
  });

  it('changes nothing and tells nobody when asked to make an inactive endpoint inactive', async () => {
    const stored = (await repository.insertWithinLimit(webhook('st_b'), 100))!;
    await repository.disable(stored.id, 'gone', []);
    const before = await db.query('SELECT * FROM webhooks WHERE id = $1', [stored.id]);
    const handler = jest.fn();
    const again = await repository.update('st_b', stored.id, { isActive: false, disabledReason: 'manual', disabledAt: new Date() }, [
      handler,
    ]);
    expect(again).toMatchObject({ isActive: false, disabledReason: 'gone' });
    expect(handler).not.toHaveBeenCalled();
    expect(await db.query('SELECT * FROM webhooks WHERE id = $1', [stored.id])).toEqual(before);

    // Other fields of the same request still apply; the reason stays Hookline's.
    const renamed = await repository.update('st_b', stored.id, { name: 'renamed', isActive: false, disabledReason: 'manual' }, [handler]);
    expect(renamed).toMatchObject({ name: 'renamed', isActive: false, disabledReason: 'gone' });
    expect(handler).not.toHaveBeenCalled();
    expect(await repository.update('st_a', stored.id, { isActive: false }, [handler])).toBeNull();
  });

  it('runs the handlers when an active endpoint is made inactive', async () => {
    const stored = (await repository.insertWithinLimit(webhook('st_b'), 100))!;
    const handler = jest.fn();
    const updated = await repository.update('st_b', stored.id, { isActive: false, disabledReason: 'manual', disabledAt: new Date() }, [
      handler,
    ]);
    expect(updated).toMatchObject({ isActive: false, disabledReason: 'manual' });
    expect(handler).toHaveBeenCalledTimes(1);
  });
});
