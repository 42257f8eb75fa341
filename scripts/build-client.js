#!/usr/bin/env node
/**
 * Builds @hookline/client (packages/client) when its sources are newer than its dist/, which is
 * what its users and the client's specs load. `npm ci` runs it (the root's `prepare`), and so does
 * the test run's global setup, so a pull or an edit never leaves the specs on an old build. Where
 * TypeScript is not installed (`npm ci --omit=dev`) it does nothing: the service does not use the client.
 */
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const packageDir = join(root, 'packages', 'client');

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, entry) => Math.max(latest, newest(join(path, entry))), stat.mtimeMs);
}

function typescriptInstalled() {
  try {
    require.resolve('typescript', { paths: [packageDir] });
    return true;
  } catch {
    return false;
  }
}

const entry = join(packageDir, 'dist', 'index.js');
const builtAt = existsSync(entry) ? statSync(entry).mtimeMs : 0;
const stale = ['src', 'package.json', 'tsconfig.json'].some((input) => newest(join(packageDir, input)) > builtAt);
if (stale && typescriptInstalled()) {
  console.log(`building @hookline/client: ${builtAt ? 'its sources changed since its last build' : 'it has no build yet'}`);
  execFileSync('npm', ['run', '--silent', 'build', '-w', '@hookline/client'], { cwd: root, stdio: 'inherit' });
}
