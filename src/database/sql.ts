import type { Pool } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';

type Queryable = Pick<EntityManager, 'query'> | Pick<DataSource, 'query'>;

/**
 * Rows of a raw statement run through TypeORM. On PostgreSQL TypeORM answers UPDATE and DELETE
 * with `[rows, affectedCount]` but everything else with `rows`; this always gives the rows.
 */
export async function rowsOf<T>(db: Queryable, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  const result: unknown = await db.query(sql, params as unknown[]);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}

/**
 * One SQL statement with a name and a fixed text: values always travel as parameters, so the text
 * reviewed in its `*.sql.ts` file (and in the checked-in snapshots) is the text PostgreSQL runs.
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

export function statement(name: string, text: string): Statement {
  return Object.freeze({ name, text: dedent(text) });
}

/** Runs statements on a pg pool or through TypeORM alike, so a repository has one code path for both. */
export interface Sql {
  rows<T>(statement: Statement, values?: readonly unknown[]): Promise<T[]>;
}

/** On a pg pool or client: each statement is prepared once per connection, under its name. */
export function poolSql(pool: Pick<Pool, 'query'>): Sql {
  return {
    async rows<T>(statement: Statement, values: readonly unknown[] = []): Promise<T[]> {
      const result = await pool.query({ name: `hookline-${statement.name}`, text: statement.text, values: values as unknown[] });
      return result.rows as T[];
    },
  };
}

/** Through TypeORM: the data source, or a caller's transaction when given its manager. */
export function typeormSql(db: Queryable): Sql {
  return { rows: <T>(statement: Statement, values: readonly unknown[] = []) => rowsOf<T>(db, statement.text, values) };
}

function dedent(text: string): string {
  const lines = text.replace(/^\n+|\s+$/g, '').split('\n');
  const indent = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length));
  return lines.map((line) => line.slice(indent).trimEnd()).join('\n');
}
