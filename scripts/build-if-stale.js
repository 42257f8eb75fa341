#!/usr/bin/env node
/**
 * `npm start` builds only when a build input changed since the last build, so a second start
 * takes seconds instead of a full `nest build`. `--stamp` records a finished build (run by
 * `npm run build` itself, so a build made by hand counts too).
 */
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');
const inputs = ['src', 'bench', 'ormconfig.ts', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package-lock.json'];

/** The newest modification time under a path; a folder's own time changes when a file is removed. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

if (process.argv.includes('--stamp')) {
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
} else {
  const built = existsSync(stamp) && existsSync(join(root, 'dist', 'src', 'main.js')) ? statSync(stamp).mtimeMs : 0;
  const changed = inputs.some((input) => existsSync(join(root, input)) && newest(join(root, input)) > built);
  if (changed) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  else console.log('dist/ is up to date with src/: starting without a build');
}
