import { spawnSync } from 'node:child_process';
import type { Bench } from './bench';

/**
 * Before a latency measurement, has the kernel write back what earlier phases left dirty (`sync`):
 * Linux flushes a dirty page 30 s after it was dirtied, all at once, and a publish's commit (which
 * waits for its WAL flush) would wait behind that flush. No CHECKPOINT: the first change to each
 * page after one writes the whole page to the WAL, which slows the phase that follows.
 */
export async function settle(bench: Bench): Promise<void> {
  const started = performance.now();
  const synced = spawnSync('sync').status === 0;
  const syncedMs = Math.round(performance.now() - started);
  const collected = collectGarbage();
  bench.log(`  ${synced ? 'sync' : 'sync failed'} in ${syncedMs} ms (earlier phases' dirty pages written back)${collected}`);
}

/**
 * A full collection of the orchestrator's heap (about half of it garbage after transpiling), between
 * phases, when `npm run bench` exposed `gc`: with the memory reducer off nothing else collects it
 * while a phase is measured. Returns what to log.
 */
export function collectGarbage(): string {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return '';
  const started = performance.now();
  gc();
  return `; orchestrator's heap collected in ${Math.round(performance.now() - started)} ms`;
}
