import type { DataSource, EntityManager } from 'typeorm';

type Queryable = Pick<EntityManager, 'query'> | Pick<DataSource, 'query'>;

/**
 * Rows of a raw statement run through TypeORM. On PostgreSQL TypeORM answers UPDATE and DELETE
 * with `[rows, affectedCount]` but everything else with `rows`; this always gives the rows.
 */
export async function rowsOf<T>(db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> {
  const result: unknown = await db.query(sql, params);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}
