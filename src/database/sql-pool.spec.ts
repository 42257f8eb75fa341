import { loadConfig } from '../config/app-config';
import { connectionBudget } from './connection-budget';
import { SqlPool } from './sql-pool';

describe('SqlPool', () => {
  it('opens at most its share of DB_POOL_SIZE and answers queries', async () => {
    const config = loadConfig({
      DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
      DB_POOL_SIZE: '20',
    });
    const pool = new SqlPool(config);
    try {
      expect(pool.options.max).toBe(connectionBudget(20).sql);
      if (process.env.DATABASE_URL) expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.onApplicationShutdown();
    }
    expect(pool.ended).toBe(true);
  });
});
