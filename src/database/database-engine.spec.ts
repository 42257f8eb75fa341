import { DatabaseEngine } from './database-engine';

describe('DatabaseEngine', () => {
  it('is Citus when the citus extension is in the database, and one server otherwise', async () => {
    expect((await DatabaseEngine.detect(() => Promise.resolve([{ citus: true }]))).citus).toBe(true);
    expect(await DatabaseEngine.detect(() => Promise.resolve([{ citus: false }]))).toBe(DatabaseEngine.plain);
  });
});
