/**
 * Messages between the benchmark's orchestrator (bench/run.ts) and its child processes, over the
 * Node IPC channel of `child_process.fork`. Every child announces itself with `ready`; load
 * generators end with one `result`; long-lived children (receiver, Hookline) answer `rpc` calls.
 */
export type ChildMessage =
  | { type: 'ready'; [key: string]: unknown }
  | { type: 'result'; result: unknown }
  | { type: 'error'; message: string }
  | { type: 'rpc-result'; id: number; result?: unknown; error?: string };

export type ParentMessage = { type: 'rpc'; id: number; method: string; params?: unknown };

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes on one machine. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}
