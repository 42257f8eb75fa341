import { execFileSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';
import { prepareChromium } from './browser';

/**
 * End-to-end specs run against the PostgreSQL named by DATABASE_URL (CI: the local server). On a
 * machine without one, they get an embedded server for the whole run; each spec file then creates
 * its own database on it (see database.ts). The browser specs' Chromium is made ready here too, and
 * the built @hookline/client that the client's specs load.
 */
export default async function globalSetup(): Promise<void> {
  await prepareChromium();
  execFileSync(process.execPath, [join(__dirname, '..', '..', 'scripts', 'build-client.js')], { stdio: 'inherit' });
  if (process.env.DATABASE_URL) return;
  const dataDir = await mkdtemp(join(tmpdir(), 'hookline-test-pg-'));
  const server = await EmbeddedPostgres.start(dataDir, { info: () => undefined, warn: (m) => console.warn(m) });
  // The superuser's: the specs create a database (and its owner role) each (database.ts).
  process.env.DATABASE_URL = server.adminUrl;
  process.env.HOOKLINE_TEST_EMBEDDED_DIR = dataDir;
  (globalThis as { __embeddedPostgres?: EmbeddedPostgres }).__embeddedPostgres = server;
  console.log(`\n[test] DATABASE_URL unset: using an embedded PostgreSQL in ${dataDir}`);
}
