import { setFlagsFromString } from 'node:v8';

/**
 * After each full garbage collection V8 lets the heap grow to this much more than what survived
 * before it collects again: 150 % (2.5×). Left to itself V8 picks up to 4× when allocation is
 * fast, and Hookline allocates fast while it keeps little, so the heap would grow far past what
 * survives; the few more full collections are as short, since their work follows what survives
 * (docs/scaling.md has the figures).
 */
export const HEAP_GROWING_PERCENT = 150;

/** Applies {@link HEAP_GROWING_PERCENT} unless Node was started with its own `--heap-growing-percent`. */
export function limitHeapGrowth(): void {
  if (process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
