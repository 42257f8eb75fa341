import { rm } from 'node:fs/promises';
import type { EmbeddedPostgres } from '../../src/database/embedded-postgres';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as { __embeddedPostgres?: EmbeddedPostgres }).__embeddedPostgres;
  if (!server) return;
  await server.stop();
  const dir = process.env.HOOKLINE_TEST_EMBEDDED_DIR;
  if (dir) await rm(dir, { recursive: true, force: true });
}
