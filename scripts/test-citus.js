#!/usr/bin/env node
/**
 * `npm run test:citus`: the core end-to-end specs against the Citus coordinator named by
 * CITUS_URL (a database with the citus extension and its worker nodes registered, as
 * `citus-cluster up` prints). Each spec file gets a database of its own on every node
 * (test/support/database.ts). Extra arguments go to Jest (a spec's path, `-t name`).
 */
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

/**
 * What must hold on a cluster as on one PostgreSQL, and what only a cluster has. Fair dispatch
 * works there too, but its spec's bound on latency (p99 of 250 ms) is one the cluster's claim,
 * a statement per store, misses on a busy two-core machine (docs/scaling.md, "Citus").
 */
const SPECS = [
  'src/database/citus-distribution.spec.ts',
  'test/publishing.e2e-spec.ts',
  'test/publishing-batch.e2e-spec.ts',
  'test/delivery.e2e-spec.ts',
  'test/receivers-retries.e2e-spec.ts',
  'test/replay.e2e-spec.ts',
  'test/store-isolation.e2e-spec.ts',
  'test/retention.e2e-spec.ts',
  'test/flow-control.e2e-spec.ts',
  'test/citus-shard-move.e2e-spec.ts',
  'test/crash.e2e-spec.ts',
];

const url = process.env.CITUS_URL;
if (!url) {
  console.error('test:citus: set CITUS_URL to a Citus coordinator (e.g. the URL `citus-cluster up` prints)');
  process.exit(2);
}
const extra = process.argv.slice(2);
const chosen = extra.some((arg) => /\.(e2e-)?spec\.ts$/.test(arg)) ? [] : SPECS;
const jest = join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js');
const run = spawnSync(process.execPath, [jest, '--runInBand', ...chosen, ...extra], {
  stdio: 'inherit',
  env: { ...process.env, DATABASE_URL: url },
});
process.exit(run.status ?? 1);
