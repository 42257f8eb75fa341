import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { EventType } from '../../src/catalogue/event-catalogue';
import type { ArrivalSummary, Arrivals } from '../receiver';
import { transpileProject } from './build';
import { Child, ChildRegistry, sleep } from './children';
import {
  ADMIN_KEY,
  DELIVERY_TIMEOUT_MS,
  DISPATCH_CONCURRENCY,
  ENCRYPTION_KEY,
  ENDPOINT_CONCURRENCY,
  ENDPOINTS,
  FULL,
  Options,
  QUICK,
  RETRY_SCHEDULE_MS,
  ROOT,
  Scenario,
  Sizes,
} from './config';
import { formatProfile } from './cpuprofile';
import { CpuSnapshot, CpuUse, cpuUseBetween } from './cpu';
import { adminQuery, BenchDatabase, createDatabase, statusCounts } from './db';
import { machineCpuSeconds, mainThreadRunQueueSeconds, processCpuSeconds } from './proc';
import type { Row } from './report';
import { collectGarbage } from './settle';
import { round } from './stats';

export interface HooklineProcess {
  child: Child;
  baseUrl: string;
  label: string;
}

/**
 * What every scenario works with: the child processes (receiver, Hookline, load generators), the
 * benchmark's database, the measuring helpers, and the results and table rows gathered so far.
 */
export class Bench {
  readonly sizes: Sizes;
  readonly results: Record<string, unknown> = {};
  readonly rows: Row[] = [];
  readonly cpu: Record<string, CpuUse> = {};
  readonly sql: Record<string, unknown> = {};
  readonly profiles: string[] = [];
  /** A failed scenario's error, by scenario. */
  readonly errors: Record<string, string> = {};
  /** Rows whose ratio to the ceiling is filled in at the end, once every ceiling measurement is known. */
  readonly ratioRows: Array<{ row: Row; dispatchRow: Row; perSec: number; allDurable: boolean; key: string }> = [];
  private readonly started = Date.now();
  private readonly tmpDir: string;
  private readonly buildDir: string;
  private readonly logDir: string;
  private readonly profileDir: string;
  readonly registry: ChildRegistry;
  db?: BenchDatabase;
  readonly extraDatabases: BenchDatabase[] = [];
  /** Set by Ctrl-C / SIGTERM: no further scenario starts. */
  aborted = false;
  receiver?: Child;
  ports: number[] = [];
  hookline?: HooklineProcess;
  private cleaned = false;

  constructor(
    readonly options: Options,
    readonly serverUrl: string | undefined,
  ) {
    this.sizes = { ...(options.quick ? QUICK : FULL) };
    if (options.isoRate) this.sizes.isoRate = options.isoRate;
    if (options.claimFinished !== undefined) this.sizes.claimFinished = options.claimFinished;
    this.tmpDir = mkdtempSync(join(os.tmpdir(), 'hookline-bench-'));
    this.buildDir = join(this.tmpDir, 'build');
    this.logDir = join(this.tmpDir, 'logs');
    this.profileDir = join(ROOT, 'bench', 'profiles', new Date().toISOString().replace(/[:.]/g, '-'));
    mkdirSync(this.logDir, { recursive: true });
    this.registry = new ChildRegistry(this.buildDir, this.logDir);
  }

  log(line: string): void {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1).padStart(6);
    console.log(`[${seconds}s] ${line}`);
  }

  row(scenario: string, metric: string, value: string | number, target?: string, pass?: boolean): void {
    this.rows.push({ scenario, metric, value: String(value), target, pass });
  }

  ratioRow(scenario: string, key: string, perSec: number, allDurable: boolean): void {
    const row: Row = { scenario, metric: 'ratio to the ceiling', value: '', target: '≥ 0.5' };
    const dispatchRow: Row = { scenario, metric: "for comparison: ratio to the dispatch run of the ceiling's client", value: '' };
    this.rows.push(row, dispatchRow);
    this.ratioRows.push({ row, dispatchRow, perSec, allDurable, key });
  }

  has(scenario: Scenario): boolean {
    return this.options.only.has(scenario);
  }

  async prepare(): Promise<void> {
    const built = transpileProject(ROOT, this.buildDir);
    this.log(`transpiled ${built.files} files in ${built.ms} ms into ${this.buildDir}`);
    collectGarbage();
    this.receiver = this.registry.start('receiver', { endpoints: ENDPOINTS });
    this.ports = (await this.receiver.ready()).ports as number[];
    this.log(`receiver pid ${this.receiver.pid} on 127.0.0.1 ports ${this.ports.join(', ')}`);
  }

  async prepareDatabase(): Promise<void> {
    this.db = await createDatabase(this.serverUrl!);
    this.log(`database ${this.db.name} created`);
  }

  url(endpoint: number, path: string): string {
    return `http://127.0.0.1:${this.ports[endpoint]}${path}`;
  }

  // ---------------------------------------------------------------------------------------------
  // processes

  /** Starts Hookline with the benchmark's environment, and `env` on top of it. */
  async startHookline(label: string, onSpawn?: (child: Child) => void, env: NodeJS.ProcessEnv = {}): Promise<HooklineProcess> {
    if (this.options.profile) mkdirSync(this.profileDir, { recursive: true });
    const child = this.registry.start('hookline-server', {}, { env: { ...this.hooklineEnv(), ...env }, execArgv: hooklineNodeFlags() });
    onSpawn?.(child);
    const ready = await child.ready(90_000);
    this.hookline = { child, baseUrl: `http://127.0.0.1:${ready.port as number}`, label };
    this.log(`Hookline (${label}) pid ${child.pid} listening on ${this.hookline.baseUrl}`);
    return this.hookline;
  }

  hooklineEnv(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      LOG_LEVEL: this.options.logLevel,
      DATABASE_URL: this.db!.url,
      HOST: '127.0.0.1',
      PORT: '0',
      ADMIN_API_KEY: ADMIN_KEY,
      SECRET_ENCRYPTION_KEY: ENCRYPTION_KEY,
      ALLOW_HTTP_URLS: 'true',
      ALLOW_PRIVATE_NETWORKS: 'true',
      DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS),
      RETRY_SCHEDULE_MS: RETRY_SCHEDULE_MS.join(','),
      // The retry scenario measures how close attempts come to the schedule, so no spread.
      RETRY_JITTER: '0',
      DISPATCH_CONCURRENCY: String(DISPATCH_CONCURRENCY),
      ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      // Off: one API key drives all the load here, which any deployed limit would cut with 429s;
      // the benchmark measures Hookline, not the limiter.
      RATE_LIMIT_PER_MINUTE: '0',
      // Every scenario registers its own endpoints in the one store: about 150 over a full run.
      MAX_WEBHOOKS_PER_STORE: '1000',
      BENCH_SQL_STATS: this.options.sqlStats ? '1' : '0',
      // PostgreSQL session settings for Hookline's connections (auto_explain, say), for diagnosis.
      ...(process.env.PGOPTIONS ? { PGOPTIONS: process.env.PGOPTIONS } : {}),
      // OpenTelemetry export (OTEL_EXPORTER_OTLP_ENDPOINT...), to measure what tracing costs; unset: off.
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_'))),
    };
  }

  async stopHookline(): Promise<void> {
    const hookline = this.hookline;
    if (!hookline) return;
    this.hookline = undefined;
    const code = await hookline.child.stop(30_000);
    this.log(`Hookline (${hookline.label}) stopped, exit code ${code}`);
  }

  /** With --profile: starts a CPU profile of the running Hookline process (ended by cpuSince). */
  async profileStart(): Promise<void> {
    if (this.options.profile && this.hookline?.child.running) await this.hookline.child.call('profileStart');
  }

  async profileStop(name: string): Promise<void> {
    if (!this.options.profile || !this.hookline?.child.running) return;
    const file = await this.hookline.child.call<string | undefined>('profileStop', {
      path: join(this.profileDir, `hookline-${name}.cpuprofile`),
    });
    if (!file) return;
    this.profiles.push(file);
    console.log(formatProfile(file, 20));
  }

  /** A request to Hookline's API with `key` (the admin key by default); the answer's JSON, or an error. */
  async api<T>(method: string, path: string, body?: unknown, key = ADMIN_KEY): Promise<T> {
    const response = await fetch(`${this.hookline!.baseUrl}/api/v1/external${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async createWebhooks(type: EventType, urls: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const [i, url] of urls.entries()) {
      const created = await this.api<{ id: string }>('POST', '/webhooks', { name: `bench ${type} ${i}`, url, events: [type] });
      ids.push(created.id);
    }
    return ids;
  }

  // ---------------------------------------------------------------------------------------------
  // measuring

  async cpuSnapshot(): Promise<CpuSnapshot> {
    const pids: CpuSnapshot['pids'] = new Map();
    if (this.hookline?.child.running)
      pids.set(this.hookline.child.pid, { cpu: processCpuSeconds(this.hookline.child.pid), kind: 'hookline' });
    if (this.receiver?.running) pids.set(this.receiver.pid, { cpu: processCpuSeconds(this.receiver.pid), kind: 'receiver' });
    if (this.db) {
      const backends = await this.db.pool.query<{ pid: number; backend_type: string }>(
        `SELECT pid, backend_type FROM pg_stat_activity WHERE datname = current_database() AND application_name <> 'hookline-bench'`,
      );
      for (const { pid, backend_type } of backends.rows) {
        pids.set(pid, { cpu: processCpuSeconds(pid), kind: backend_type === 'client backend' ? 'postgres' : 'autovacuum' });
      }
    }
    await this.profileStart();
    const pid = this.hookline?.child.running ? this.hookline.child.pid : undefined;
    const hookline = pid === undefined ? undefined : { pid, waited: mainThreadRunQueueSeconds(pid) };
    return { at: Date.now(), machine: machineCpuSeconds(), own: process.cpuUsage(), hookline, pids };
  }

  async cpuSince(name: string, start: CpuSnapshot, loadGeneratorCpuS = 0): Promise<CpuUse> {
    const end = await this.cpuSnapshot();
    const use = cpuUseBetween(start, end, process.cpuUsage(start.own), loadGeneratorCpuS);
    this.cpu[name] = use;
    await this.profileStop(name);
    return use;
  }

  async resetSqlStats(): Promise<void> {
    if (this.options.sqlStats && this.hookline) await this.hookline.child.call('resetSqlStats');
  }

  async collectSqlStats(name: string): Promise<void> {
    if (!this.options.sqlStats || !this.hookline) return;
    const stats = await this.hookline.child.call<Array<{ statement: string; calls: number; totalMs: number; maxMs: number }>>('sqlStats');
    const top = stats
      .slice(0, 8)
      .map((s) => ({ ...s, totalMs: Math.round(s.totalMs), meanMs: round(s.totalMs / s.calls, 2), maxMs: round(s.maxMs, 1) }));
    this.sql[name] = top;
    console.log(`SQL time in Hookline during ${name} (top statements by total time):`);
    for (const s of top)
      console.log(
        `  ${String(s.totalMs).padStart(7)} ms  ${String(s.calls).padStart(6)} calls  mean ${s.meanMs} ms  max ${s.maxMs} ms  ${s.statement.slice(0, 90)}`,
      );
  }

  summary(prefix: string): Promise<ArrivalSummary> {
    return this.receiver!.call<ArrivalSummary>('summary', { prefix });
  }

  arrivals(prefix: string): Promise<Arrivals> {
    return this.receiver!.call<Arrivals>('arrivals', { prefix });
  }

  /**
   * Polls the receiver until `expected` distinct deliveries arrived (with `attempts`, until that
   * many requests arrived in all, retries included), or nothing new came for `stallMs`.
   */
  async waitForArrivals(
    prefix: string,
    expected: number,
    stallMs: number,
    counting: 'deliveries' | 'attempts' = 'deliveries',
  ): Promise<ArrivalSummary> {
    let last = -1;
    let lastChange = Date.now();
    for (;;) {
      const summary = await this.summary(prefix);
      const seen = counting === 'attempts' ? summary.count : summary.unique;
      if (seen >= expected) return summary;
      if (seen !== last) {
        last = seen;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > stallMs) {
        this.log(`  ! only ${seen} of ${expected} ${counting} arrived at ${prefix} (nothing new for ${stallMs} ms)`);
        return summary;
      }
      await sleep(100);
    }
  }

  /** Polls the database until `expected` deliveries of the type have `status`; the wall time it saw them. */
  async waitForStatus(
    type: string,
    status: string,
    expected: number,
    timeoutMs: number,
  ): Promise<{ at: number; counts: Record<string, number> }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const counts = await statusCounts(this.db!.pool, type);
      if ((counts[status] ?? 0) >= expected) return { at: Date.now(), counts };
      if (Date.now() > deadline) {
        this.log(`  ! ${counts[status] ?? 0} of ${expected} ${type} deliveries ${status} after ${timeoutMs} ms: ${JSON.stringify(counts)}`);
        return { at: Number.NaN, counts };
      }
      await sleep(100);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // cleaning up

  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    await this.registry.stopAll(10_000).catch(() => undefined);
    for (const db of [this.db, ...this.extraDatabases]) {
      if (!db) continue;
      // A kept database is dropped as stale by the first run an hour later.
      if (this.options.keep) this.log(`kept database ${db.name}`);
      else await db.drop().catch((error: unknown) => console.error(`could not drop ${db.name}: ${String(error)}`));
    }
    if (this.options.keep) this.log(`kept ${this.tmpDir}`);
    else rmSync(this.tmpDir, { recursive: true, force: true });
  }

  /** Databases left by a benchmark killed with SIGKILL, which had no chance to clean up. */
  async dropStaleDatabases(): Promise<void> {
    const rows = await adminQuery<{ datname: string }>(
      this.serverUrl!,
      `SELECT d.datname FROM pg_database d
       WHERE d.datname LIKE 'hookline\\_bench\\_%' AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)
         AND (pg_stat_file('base/' || d.oid || '/PG_VERSION')).modification < now() - interval '1 hour'`,
    ).catch(() => []);
    for (const { datname } of rows) {
      await adminQuery(this.serverUrl!, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => undefined);
      this.log(`dropped stale database ${datname}`);
    }
  }
}

/** The Node flags of `npm start` (package.json), so that every Node worker here runs as a deployed Hookline does. */
export function deployedNodeFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

/** Hookline's Node flags: as deployed, then HOOKLINE_NODE_FLAGS (--trace-gc, --cpu-prof, say), for diagnosis. */
export function hooklineNodeFlags(): string[] {
  return [...deployedNodeFlags(), ...(process.env.HOOKLINE_NODE_FLAGS?.split(' ').filter(Boolean) ?? [])];
}
