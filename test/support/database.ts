import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export interface TestDatabase {
  name: string;
  url: string;
  /** A client on the test database, for assertions on what was (not) written. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set (test/support/global-setup.ts sets it)');
  return url;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function onServer<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(serverUrl(), 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database on the test server; every spec file gets its own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `hookline_test_${randomBytes(6).toString('hex')}`;
  await onServer((client) => client.query(`CREATE DATABASE ${name}`));
  const url = withDatabase(serverUrl(), name);
  let client: Client | undefined;
  return {
    name,
    url,
    async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
      if (!client) {
        const fresh = new Client({ connectionString: url });
        // A test may cut every connection of its database; reconnect on the next query.
        fresh.on('error', () => {
          if (client === fresh) client = undefined;
        });
        await fresh.connect();
        client = fresh;
      }
      return (await client.query(sql, params)).rows as T[];
    },
    async drop(): Promise<void> {
      await client?.end();
      client = undefined;
      await onServer((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Runs SQL on the server's maintenance database (e.g. to cut a test database's connections). */
export function adminQuery(sql: string, params: unknown[] = []): Promise<unknown> {
  return onServer((client) => client.query(sql, params));
}
