import { readFileSync } from 'node:fs';
import { ChildApp } from './support/child-app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';

/**
 * What the person starting Hookline sees: the start-up output ends with one plain "ready" block
 * (URLs to open, the generated administrator key the one time it exists), and a lost key is
 * replaced, and so revoked, by starting with ADMIN_API_KEY.
 */
const NO_ADMIN_KEY = { ADMIN_API_KEY: '' };
const CHOSEN_KEY = 'hl_chosen_after_losing_the_first_0123456789';

interface ReadyBlock {
  lines: string[];
  /** Log lines printed after the block. */
  after: string[];
  /** Log lines printed before it. */
  before: string[];
}

/** Waits for the block that starts with "<name> is ready" in the app's output. */
async function readyBlock(app: ChildApp): Promise<ReadyBlock> {
  const output = await eventually(
    async () => readFileSync(app.logFile, 'utf8'),
    (text) => /^Hookline is ready.*\n(.+\n)+\n/m.test(text),
    { what: `the ready block in ${app.logFile}` },
  );
  const all = output.split('\n');
  const start = all.findIndex((line) => line.startsWith('Hookline is ready'));
  const end = all.indexOf('', start);
  return { lines: all.slice(start, end), before: all.slice(0, start), after: all.slice(end).filter((line) => line !== '') };
}

function urlAfter(block: ReadyBlock, label: string): string {
  const line = block.lines.find((l) => l.trimStart().startsWith(`${label}:`));
  if (!line) throw new Error(`no "${label}:" line in ${JSON.stringify(block.lines)}`);
  return line.slice(line.indexOf(':') + 1).trim();
}

async function status(url: string, key?: string): Promise<number> {
  const res = await fetch(url, { headers: key ? { 'X-API-Key': key } : {} });
  await res.arrayBuffer();
  return res.status;
}

/** A start takes seconds (ts-node compiles main.ts); give it room on a busy machine. */
function start(name: string, env: Record<string, string>, databaseUrl: string): Promise<ChildApp> {
  return ChildApp.start({ name, databaseUrl, env, startDeadlineMs: 90_000 });
}

async function stop(app: ChildApp): Promise<void> {
  await app.kill('SIGTERM');
  expect(await app.waitForExit(30_000)).toEqual({ code: 0, signal: null });
}

describe('start-up output and the administrator key', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await createTestDatabase();
  });

  afterEach(async () => {
    await ChildApp.killAll();
    await db.drop();
  });

  it('ends the start-up output with a ready block of URLs that answer, and the generated key the first time only', async () => {
    const first = await start('startup-first', { ...NO_ADMIN_KEY, LOG_LEVEL: 'info' }, db.url);
    const block = await readyBlock(first);
    const api = urlAfter(block, 'API');
    expect(api).toBe(`${first.baseUrl}/api/v1/external`);
    expect(urlAfter(block, 'API docs')).toBe(`${first.baseUrl}/docs`);
    expect(urlAfter(block, 'Dashboard')).toBe(`${first.baseUrl}/dashboard`);
    expect(await status(urlAfter(block, 'API docs'))).toBe(200);
    expect(await status(urlAfter(block, 'Dashboard'))).toBe(200);

    const keyLine = block.lines.findIndex((line) => line.includes('Admin API key'));
    expect(block.lines[keyLine]).toMatch(/shown only now/);
    const key = block.lines[keyLine + 1].trim();
    expect(key).toMatch(/^hlk_[A-Za-z0-9_-]{43}$/);
    expect(await status(`${api}/webhooks`, key)).toBe(200);
    // The block is the end of the start-up output: every start-up log line came before it, and
    // the key is nowhere else.
    expect(block.before.join('\n')).toMatch(/Nest application successfully started/);
    expect(block.before.join('\n')).toMatch(/listening on/);
    expect(block.after.every((line) => /"msg":"request (completed|errored|aborted)"/.test(line))).toBe(true);
    expect(readFileSync(first.logFile, 'utf8').split(key)).toHaveLength(2);
    await stop(first);

    const later = await start('startup-later', NO_ADMIN_KEY, db.url);
    const laterBlock = await readyBlock(later);
    expect(laterBlock.lines.join('\n')).not.toMatch(/hlk_/);
    expect(laterBlock.lines.join('\n')).toMatch(/Admin API key: shown at the first start; if it is lost, restart with ADMIN_API_KEY/);
    expect(await status(`${later.baseUrl}/api/v1/external/webhooks`, key)).toBe(200);
  }, 300_000);

  it('ADMIN_API_KEY replaces a lost generated key: the old one stops at once, also in a process already running', async () => {
    const running = await start('startup-running', NO_ADMIN_KEY, db.url);
    const lines = (await readyBlock(running)).lines;
    const lost = lines[lines.findIndex((line) => line.includes('Admin API key')) + 1].trim();
    // Verified once, so the running process holds it in its cache of keys.
    expect(await status(`${running.baseUrl}/api/v1/external/webhooks`, lost)).toBe(200);

    const recovering = await start('startup-recover', { ADMIN_API_KEY: CHOSEN_KEY }, db.url);
    const block = await readyBlock(recovering);
    expect(block.lines).toContain('  Admin API key: the value of ADMIN_API_KEY');
    expect(readFileSync(recovering.logFile, 'utf8')).not.toContain(CHOSEN_KEY);
    const api = `${recovering.baseUrl}/api/v1/external`;
    expect(await status(`${api}/webhooks`, lost)).toBe(401);
    await eventually(
      () => status(`${running.baseUrl}/api/v1/external/webhooks`, lost),
      (code) => code === 401,
      {
        what: 'the running process refusing the replaced key',
      },
    );
    const listed = await fetch(`${api}/api-keys`, { headers: { 'X-API-Key': CHOSEN_KEY } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { data: Array<{ id: string; name: string }> }).data).toEqual([
      expect.objectContaining({ id: 'key_bootstrap', name: 'bootstrap (ADMIN_API_KEY)' }),
    ]);
    await stop(recovering);
    await stop(running);

    // The chosen key stays the bootstrap key once the variable is removed again.
    const after = await start('startup-after', NO_ADMIN_KEY, db.url);
    expect((await readyBlock(after)).lines.join('\n')).not.toMatch(/hlk_/);
    expect(await status(`${after.baseUrl}/api/v1/external/webhooks`, CHOSEN_KEY)).toBe(200);
    expect(await status(`${after.baseUrl}/api/v1/external/webhooks`, lost)).toBe(401);
  }, 300_000);

  it('ADMIN_API_KEY also revokes a key generated when the bootstrap key had no fixed id yet', async () => {
    const first = await start('startup-legacy', NO_ADMIN_KEY, db.url);
    const lines = (await readyBlock(first)).lines;
    const lost = lines[lines.findIndex((line) => line.includes('Admin API key')) + 1].trim();
    await stop(first);
    // Such a database: the generated key under a random id, and a key made later with it.
    await db.query(`UPDATE api_keys SET id = 'key_0legacy0generated0' WHERE id = 'key_bootstrap'`);
    await db.query(
      `INSERT INTO api_keys (id, store_id, name, scopes, key_hash, created_at)
       VALUES ('key_1later', 'st_default', 'bootstrap (generated)', '{webhooks:read}', 'not-a-real-hash', now() + interval '1 second')`,
    );

    const recovering = await start('startup-legacy-recover', { ADMIN_API_KEY: CHOSEN_KEY }, db.url);
    await readyBlock(recovering);
    expect(await status(`${recovering.baseUrl}/api/v1/external/webhooks`, lost)).toBe(401);
    expect(await status(`${recovering.baseUrl}/api/v1/external/webhooks`, CHOSEN_KEY)).toBe(200);
    expect((await db.query<{ id: string }>(`SELECT id FROM api_keys ORDER BY id`)).map((row) => row.id)).toEqual([
      'key_1later',
      'key_bootstrap',
    ]);
  }, 300_000);
});
