import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * The role the app under test connects as, as in production: no superuser, owner of its test
 * database (so its migrations own every table), nothing more. Server-wide chores go through
 * {@link adminQuery}, the server's superuser.
 */
export const APP_ROLE = 'hookline_test_app';
const APP_PASSWORD = 'hookline_test_app';

export interface TestDatabase {
  name: string;
  /** The database as {@link APP_ROLE}: what the app is given as DATABASE_URL. */
  url: string;
  /** A client on the test database as {@link APP_ROLE}, for assertions on what was (not) written. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set (test/support/global-setup.ts sets it)');
  return url;
}

function withDatabase(url: string, database: string, role?: { user: string; password: string }): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  if (role) {
    parsed.username = role.user;
    parsed.password = role.password;
  }
  return parsed.toString();
}

let appRole: Promise<unknown> | undefined;

/** Creates {@link APP_ROLE} on the server once (other test processes may be creating it at the same moment). */
function ensureAppRole(): Promise<unknown> {
  appRole ??= onServer(createRoleOn);
  return appRole;
}

async function createRoleOn(client: Client): Promise<void> {
  const found = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [APP_ROLE]);
  if (found.rowCount !== 0) return;
  await client.query(`CREATE ROLE ${APP_ROLE} LOGIN PASSWORD '${APP_PASSWORD}'`).catch((error: { code?: string }) => {
    // 42710: created meanwhile; 23505: the same, seen by the catalogue's unique index.
    if (error.code !== '42710' && error.code !== '23505') throw error;
  });
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

/**
 * The worker nodes when DATABASE_URL names a Citus coordinator (npm run test:citus), found once
 * in its own database (the cluster's tool registers them there); empty on plain PostgreSQL.
 */
let clusterWorkers: Promise<string[]> | undefined;

export function citusWorkers(): Promise<string[]> {
  clusterWorkers ??= (async () => {
    const client = new Client({ connectionString: serverUrl() });
    await client.connect();
    try {
      const citus = await client.query(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`);
      if (citus.rowCount === 0) return [];
      const nodes = await client.query<{ host: string; port: number }>(
        `SELECT nodename AS host, nodeport AS port FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0 ORDER BY nodeport`,
      );
      return nodes.rows.map(({ host, port }) => {
        const url = new URL(serverUrl());
        url.hostname = host;
        url.port = String(port);
        return url.toString();
      });
    } finally {
      await client.end();
    }
  })();
  return clusterWorkers;
}

/** Runs `fn` on the maintenance database of the server at `url` (a Citus worker node's). */
async function onNode<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(url, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A database of the same name on the coordinator and on every worker node, each with the citus
 * extension (only a superuser may create it) and owned by {@link APP_ROLE}, and the workers
 * registered in the coordinator's: what an operator sets up before giving Hookline the URL. Four
 * shards per table rather than 32 keep each spec's migrations short.
 */
async function createCitusDatabase(name: string, workers: string[]): Promise<void> {
  const nodes = [serverUrl(), ...workers];
  await Promise.all(
    nodes.map((node) =>
      onNode(node, async (client) => {
        await createRoleOn(client);
        await client.query(`CREATE DATABASE ${name} OWNER ${APP_ROLE}`);
      }),
    ),
  );
  await Promise.all(
    nodes.map(async (node) => {
      const client = new Client({ connectionString: withDatabase(node, name) });
      await client.connect();
      try {
        await client.query('CREATE EXTENSION citus');
      } finally {
        await client.end();
      }
    }),
  );
  const coordinator = new Client({ connectionString: withDatabase(serverUrl(), name) });
  await coordinator.connect();
  try {
    const self = new URL(serverUrl());
    await coordinator.query('SELECT citus_set_coordinator_host($1, $2)', [self.hostname, Number(self.port || 5432)]);
    for (const worker of workers) {
      const { hostname, port } = new URL(worker);
      await coordinator.query('SELECT citus_add_node($1, $2)', [hostname, Number(port || 5432)]);
    }
    await coordinator.query(`ALTER DATABASE ${name} SET citus.shard_count = 4`);
  } finally {
    await coordinator.end();
  }
}

/** A fresh, empty database on the test server; every spec file gets its own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `hookline_test_${randomBytes(6).toString('hex')}`;
  await ensureAppRole();
  const workers = await citusWorkers();
  if (workers.length > 0) await createCitusDatabase(name, workers);
  else await onServer((client) => client.query(`CREATE DATABASE ${name} OWNER ${APP_ROLE}`));
  const url = withDatabase(serverUrl(), name, { user: APP_ROLE, password: APP_PASSWORD });
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
      for (const worker of workers) await onNode(worker, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** The test database as the server's superuser (on Citus, for what only a superuser may do, such as moving a shard). */
export function adminUrlOf(db: TestDatabase): string {
  return withDatabase(serverUrl(), db.name);
}

/** Runs SQL on the server's maintenance database (e.g. to cut a test database's connections). */
export function adminQuery(sql: string, params: unknown[] = []): Promise<unknown> {
  return onServer((client) => client.query(sql, params));
}
