import { loadConfig } from '../config/app-config';
import { connectionBudget, MIN_DB_POOL_SIZE } from './connection-budget';

describe('connectionBudget', () => {
  it('adds up to DB_POOL_SIZE for every allowed size', () => {
    for (let total = MIN_DB_POOL_SIZE; total <= 200; total++) {
      const budget = connectionBudget(total);
      expect(budget.orm + budget.sql + budget.dispatch + budget.listen).toBe(total);
      expect(budget.orm).toBeGreaterThanOrEqual(1);
      expect(budget.sql).toBeGreaterThanOrEqual(1);
    }
  });

  it('gives the default 15 four hot-statement and six TypeORM connections', () => {
    expect(connectionBudget(15)).toEqual({ orm: 6, sql: 4, dispatch: 4, listen: 1 });
  });

  it('refuses a size below the fixed connections plus one of each pool', () => {
    expect(() => connectionBudget(MIN_DB_POOL_SIZE - 1)).toThrow(`DB_POOL_SIZE must be at least ${MIN_DB_POOL_SIZE}`);
  });

  it('is the lowest DB_POOL_SIZE the configuration accepts', () => {
    expect(() => loadConfig({ DB_POOL_SIZE: String(MIN_DB_POOL_SIZE - 1) })).toThrow(/DB_POOL_SIZE/);
    expect(loadConfig({ DB_POOL_SIZE: String(MIN_DB_POOL_SIZE) }).dbPoolSize).toBe(MIN_DB_POOL_SIZE);
  });
});
