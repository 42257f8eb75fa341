import { ChildProcess, fork } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildMessage, ParentMessage } from './protocol';

export interface StartOptions {
  /** Environment of the child (defaults to the orchestrator's). */
  env?: NodeJS.ProcessEnv;
  /** Node options of the child, e.g. `--cpu-prof` (default {@link HELPER_NODE_FLAGS}). */
  execArgv?: string[];
  /** How long to wait for `ready` (ms). */
  readyTimeoutMs?: number;
}

/** One child process: its `ready` message, RPC calls, its final result, and a clean stop. */
export class Child {
  readonly exited: Promise<number | null>;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private readyMessage?: Record<string, unknown>;
  private readonly resultPromise: Promise<unknown>;
  private exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
    readonly logPath: string,
  ) {
    let resolveResult!: (value: unknown) => void;
    let rejectResult!: (error: Error) => void;
    this.resultPromise = new Promise((resolve, reject) => {
      resolveResult = resolve;
      rejectResult = reject;
    });
    // A child that fails before anyone awaits its result must not crash the orchestrator.
    this.resultPromise.catch(() => undefined);
    proc.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') this.readyMessage = message;
      else if (message.type === 'result') resolveResult(message.result);
      else if (message.type === 'error') rejectResult(new Error(`${name} failed: ${message.message}`));
      else if (message.type === 'rpc-result') {
        const waiter = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(`${name}: ${message.error}`));
        else waiter?.resolve(message.result);
      }
    });
    this.exited = new Promise((resolve) => {
      proc.on('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? 128 : null);
        const error = new Error(`${name} exited (code ${code}, signal ${signal}); log tail:\n${this.logTail()}`);
        rejectResult(error);
        for (const waiter of this.pending.values()) waiter.reject(error);
        this.pending.clear();
        resolve(this.exitCode);
      });
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  async ready(timeoutMs = 60_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    while (!this.readyMessage) {
      if (!this.running) throw new Error(`${this.name} exited before it was ready; log tail:\n${this.logTail()}`);
      if (Date.now() > deadline) throw new Error(`${this.name} not ready within ${timeoutMs} ms; log tail:\n${this.logTail()}`);
      await sleep(20);
    }
    return this.readyMessage;
  }

  /** The load generator's result (rejects if it failed or exited without one). */
  result<T>(): Promise<T> {
    return this.resultPromise as Promise<T>;
  }

  call<T>(method: string, params?: unknown): Promise<T> {
    if (!this.running) return Promise.reject(new Error(`${this.name} is not running`));
    const id = this.nextId++;
    const message: ParentMessage = { type: 'rpc', id, method, params };
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.proc.send(message);
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`. Resolves with the exit code. */
  async stop(graceMs = 20_000): Promise<number | null> {
    if (!this.running) return this.exitCode ?? null;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  logTail(lines = 30): string {
    try {
      return readFileSync(this.logPath, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }
}

/**
 * Node flags of the benchmark's own processes (receiver, load generators), not Hookline's: no
 * memory reducer. When a process's allocation slows down, V8 runs a few full collections over the
 * next seconds to shrink its heap, marking on background threads too; on two cores that CPU is
 * taken from the processes being measured.
 */
export const HELPER_NODE_FLAGS = ['--no-memory-reducer'];

/** Every child started, so that everything can be stopped on any exit path. */
export class ChildRegistry {
  private readonly children = new Set<Child>();
  private counter = 0;

  constructor(
    private readonly buildDir: string,
    private readonly logDir: string,
  ) {}

  /** Forks `bench/<script>.js` of the transpiled tree with its JSON argument. */
  start(script: string, args: unknown, options: StartOptions = {}): Child {
    const name = `${script}#${++this.counter}`;
    const logPath = join(this.logDir, `${name.replace('#', '-')}.log`);
    const fd = openSync(logPath, 'a');
    const proc = fork(join(this.buildDir, 'bench', `${script}.js`), [JSON.stringify(args ?? {})], {
      env: options.env ?? process.env,
      execArgv: options.execArgv ?? HELPER_NODE_FLAGS,
      stdio: ['ignore', fd, fd, 'ipc'],
    });
    closeSync(fd);
    const child = new Child(name, proc, logPath);
    this.children.add(child);
    void child.exited.then(() => this.children.delete(child));
    return child;
  }

  /** Starts a load generator and waits for its result. */
  async run<T>(script: string, args: unknown, options: StartOptions = {}): Promise<T> {
    const child = this.start(script, args, options);
    return child.result<T>();
  }

  async stopAll(graceMs = 5_000): Promise<void> {
    await Promise.all([...this.children].map((child) => child.stop(graceMs)));
  }

  /** Synchronous last resort (process 'exit' handler). */
  killAllNow(): void {
    for (const child of this.children) if (child.running) child.proc.kill('SIGKILL');
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
