import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_KEY, TEST_ENCRYPTION_KEY } from './app';

const ROOT = resolve(__dirname, '..', '..');
const LOG_DIR = join(tmpdir(), 'hookline-child-logs');

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildAppOptions {
  /** The database to run on (a test database's URL); without one, the embedded PostgreSQL in env.DATA_DIR. */
  databaseUrl?: string;
  /** Start it as the leader of a process group of its own, as a shell does a foreground job. */
  ownProcessGroup?: boolean;
  /** A label for the log file name. */
  name?: string;
  /** Environment variables, as an operator would set them. */
  env?: Record<string, string>;
  /** How long to wait for the first 200 of /health. */
  startDeadlineMs?: number;
}

/**
 * Hookline as a real child process (`node -r ts-node/register/transpile-only src/main.ts`, so
 * no prior `npm run build` is needed), for what an in-process app cannot show: SIGKILL, SIGTERM
 * and the exit code. stdout and stderr go to a log file (`logFile`) for debugging and counting.
 */
export class ChildApp {
  private exitInfo?: ChildExit;
  private readonly exited: Promise<ChildExit>;

  private constructor(
    private readonly child: ChildProcess,
    readonly name: string,
    readonly logFile: string,
    readonly baseUrl: string,
    exited: Promise<ChildExit>,
  ) {
    this.exited = exited.then((info) => (this.exitInfo = info));
  }

  static readonly running = new Set<ChildApp>();

  static {
    // Should the test process end without afterAll (a crash, a timeout), leave no server behind.
    process.once('exit', () => {
      for (const app of ChildApp.running) app.child.kill('SIGKILL');
    });
  }

  static async start(options: ChildAppOptions): Promise<ChildApp> {
    mkdirSync(LOG_DIR, { recursive: true });
    const name = options.name ?? 'hookline';
    // A free port chosen here rather than PORT=0: main.ts announces its port only at level info.
    const port = await freePort();
    const logFile = join(LOG_DIR, `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.log`);
    const log = createWriteStream(logFile);
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'test',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        // These specs publish thousands of events with one key; the limit has its own spec.
        RATE_LIMIT_PER_MINUTE: '0',
        ADMIN_API_KEY: ADMIN_KEY,
        SECRET_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        ...options.env,
        ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
      },
      detached: options.ownProcessGroup ?? false,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => log.write(chunk));
    child.stderr.on('data', (chunk: Buffer) => log.write(chunk));
    child.once('close', () => log.end());
    // Exited once the process ended and its last output is in the log file.
    const exited = Promise.all([
      new Promise<ChildExit>((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal }))),
      new Promise<void>((resolveLog) => log.once('close', () => resolveLog())),
    ]).then(([info]) => info);

    // On a Citus cluster (npm run test:citus) the first start distributes the schema, which takes longer.
    const deadlineMs = options.startDeadlineMs ?? (process.env.CITUS_URL ? 150_000 : 30_000);
    const deadline = Date.now() + deadlineMs;
    const app = new ChildApp(child, name, logFile, `http://127.0.0.1:${port}`, exited);
    ChildApp.running.add(app);
    void app.exited.then(() => ChildApp.running.delete(app));
    try {
      for (;;) {
        if ((await app.health()) === 200) return app;
        if (app.exit)
          throw new Error(`${name} exited (code ${app.exit.code}, signal ${app.exit.signal}) before it was ready; see ${logFile}`);
        if (Date.now() > deadline) throw new Error(`${name}: /health not 200 within ${deadlineMs} ms; see ${logFile}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } catch (error) {
      child.kill('SIGKILL');
      await exited;
      throw error;
    }
  }

  /** Kills every child still running (afterAll safety net, so no spec leaves a process behind). */
  static async killAll(): Promise<void> {
    await Promise.all([...ChildApp.running].map((app) => app.kill('SIGKILL').then(() => app.waitForExit(10_000))));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The exit, once it happened. */
  get exit(): ChildExit | undefined {
    return this.exitInfo;
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.exitInfo) this.child.kill(signal);
  }

  /** Signals its whole process group, as Ctrl+C in a terminal does (needs `ownProcessGroup`). */
  killGroup(signal: NodeJS.Signals): void {
    if (!this.exitInfo) process.kill(-this.child.pid!, signal);
  }

  /** Waits for the process to end; fails at the deadline (the process is then SIGKILLed). */
  async waitForExit(deadlineMs: number): Promise<ChildExit> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            this.child.kill('SIGKILL');
            reject(new Error(`${this.name} did not exit within ${deadlineMs} ms (killed); see ${this.logFile}`));
          }, deadlineMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** GET /health's status, or 0 when the process does not answer. */
  async health(): Promise<number> {
    try {
      const res = await fetch(`${this.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  }

  /** fetch against the API (`path` relative to /api/v1/external) with the admin key. */
  api(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
    const { json, headers, ...rest } = init;
    const allHeaders = new Headers(headers);
    allHeaders.set('X-API-Key', ADMIN_KEY);
    if (json !== undefined) allHeaders.set('Content-Type', 'application/json');
    return fetch(`${this.baseUrl}/api/v1/external${path}`, {
      ...rest,
      headers: allHeaders,
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    });
  }

  /** The log's JSON lines (pino) so far; other lines are returned as `{ msg: line }`. */
  logLines(): Array<{ level?: number; msg?: string; context?: string }> {
    return readFileSync(this.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        try {
          return JSON.parse(line) as { level?: number; msg?: string; context?: string };
        } catch {
          return { msg: line };
        }
      });
  }
}

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  return port;
}
