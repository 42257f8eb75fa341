/**
 * Hookline's benchmark (issue 6): `npm run bench` (full, several minutes) or `npm run bench -- --quick`
 * (under a minute), against the PostgreSQL server of DATABASE_URL, on which it creates and drops
 * its own databases. See bench/README.md for what each scenario measures.
 *
 * Processes: this orchestrator; the receiver (bench/receiver.ts); Hookline (bench/hookline-server.ts);
 * load generators (bench/load-http.ts, bench/publisher.ts, bench/api-load.ts), each started when
 * needed. src/ and bench/ are transpiled once into a temporary directory and run as plain JavaScript.
 *
 * Options:
 *   --quick            every scenario shrunk; under 60 s
 *   --clients          only the HTTP-client comparison (bench/http-clients.ts); no database needed
 *   --only=a,b         only these scenarios: ceiling, api, throughput, latency, isolation, retry, backlog, claim
 *   --profile          run Hookline under --cpu-prof (profiles in bench/profiles/) and print where its time goes
 *   --sql-stats        time Hookline's SQL statements per scenario (pg driver wrapper) and print the top ones
 *   --log-level=L      Hookline's LOG_LEVEL (default info, as deployed)
 *   --iso-rate=N       events/s of the isolation scenario (default 100; each fans out to 10 endpoints)
 *   --keep             keep the temporary directory (transpiled code, child logs)
 *   --out=FILE         where to write the results (default bench/results.json)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { EVENT_CATALOGUE, EventType } from '../src/catalogue/event-catalogue';
import type { ApiLoadArgs, ApiLoadResult } from './api-load';
import { compareHttpClients, formatComparison, type ClientComparison } from './http-clients';
import type { LoadHttpArgs, LoadHttpResult } from './load-http';
import type { PublisherArgs, PublisherResult } from './publisher';
import type { ArrivalSummary, Arrivals } from './receiver';
import { transpileProject } from './lib/build';
import { Child, ChildRegistry, sleep } from './lib/children';
import { measureClaim } from './lib/claim';
import { formatProfile } from './lib/cpuprofile';
import { adminQuery, attemptOutcomes, BenchDatabase, bulkPublish, createDatabase, statusCounts } from './lib/db';
import { machineCpuSeconds, mainThreadRunQueueSeconds, processCpuSeconds, processMemoryMb, RssSampler } from './lib/proc';
import { distribution, max, mean, min, percentile, round } from './lib/stats';

const ROOT = resolve(__dirname, '..');
const ADMIN_KEY = 'hl_bench_admin_key_0123456789abcdef';
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString('base64');
const STORE = 'st_default';
const ENDPOINTS = 10;
const DISPATCH_CONCURRENCY = 512;
const ENDPOINT_CONCURRENCY = 64;
const DELIVERY_TIMEOUT_MS = 2000;
const RETRY_SCHEDULE_MS = [0, 1000, 4000];
const SCENARIOS = ['ceiling', 'api', 'throughput', 'latency', 'isolation', 'retry', 'backlog', 'claim'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Options {
  quick: boolean;
  clients: boolean;
  only: Set<Scenario>;
  profile: boolean;
  sqlStats: boolean;
  logLevel: string;
  isoRate?: number;
  keep: boolean;
  out: string;
}

interface Sizes {
  ceilingWarmupMs: number;
  ceilingMs: number;
  apiWarmupSec: number;
  apiSec: number;
  apiConnections: number;
  throughputEvents: number;
  latencyRate: number;
  /** Before the fixed rate: this long at 100/s, so that Hookline's publish path is compiled (JIT). */
  latencyRampMs: number;
  latencyWarmupMs: number;
  latencyMs: number;
  isoRate: number;
  isoWarmupMs: number;
  isoMs: number;
  retryEvents: number;
  retryEndpoints: number;
  retryRate: number;
  backlogEvents: number;
  claimPending: number;
  claimFinished: number;
  claimRuns: number;
  clientsWarmupMs: number;
  clientsMs: number;
  clientsRounds: number;
}

const FULL: Sizes = {
  ceilingWarmupMs: 1000,
  ceilingMs: 10_000,
  apiWarmupSec: 2,
  apiSec: 10,
  apiConnections: 50,
  throughputEvents: 10_000, // × 10 endpoints = 100,000 deliveries
  latencyRate: 500,
  latencyRampMs: 15_000,
  latencyWarmupMs: 2000,
  latencyMs: 20_000,
  isoRate: 100,
  isoWarmupMs: 2000,
  isoMs: 15_000,
  retryEvents: 400,
  retryEndpoints: 5,
  retryRate: 200,
  backlogEvents: 20_000, // × 10 endpoints = 200,000 deliveries
  claimPending: 10_000,
  claimFinished: 2_000_000,
  claimRuns: 30,
  clientsWarmupMs: 1000,
  clientsMs: 5000,
  clientsRounds: 3,
};

const QUICK: Sizes = {
  ceilingWarmupMs: 1000,
  ceilingMs: 2000,
  apiWarmupSec: 0,
  apiSec: 2,
  apiConnections: 50,
  throughputEvents: 1000,
  latencyRate: 500,
  latencyRampMs: 1000,
  latencyWarmupMs: 500,
  latencyMs: 1500,
  isoRate: 100,
  isoWarmupMs: 300,
  isoMs: 1500,
  retryEvents: 40,
  retryEndpoints: 5,
  retryRate: 200,
  backlogEvents: 2000,
  claimPending: 5000,
  claimFinished: 200_000,
  claimRuns: 8,
  clientsWarmupMs: 500,
  clientsMs: 1500,
  clientsRounds: 1,
};

function parseOptions(argv: string[]): Options {
  const options: Options = {
    quick: false,
    clients: false,
    only: new Set(SCENARIOS),
    profile: false,
    sqlStats: false,
    logLevel: 'info',
    keep: false,
    out: join(ROOT, 'bench', 'results.json'),
  };
  for (const arg of argv) {
    const [key, value] = arg.split('=', 2);
    switch (key) {
      case '--quick':
        options.quick = true;
        break;
      case '--clients':
        options.clients = true;
        break;
      case '--only': {
        const names = (value ?? '').split(',').filter(Boolean);
        for (const name of names)
          if (!SCENARIOS.includes(name as Scenario)) throw new Error(`unknown scenario ${name}; one of ${SCENARIOS.join(', ')}`);
        options.only = new Set(names as Scenario[]);
        break;
      }
      case '--profile':
        options.profile = true;
        break;
      case '--sql-stats':
        options.sqlStats = true;
        break;
      case '--log-level':
        options.logLevel = value ?? 'info';
        break;
      case '--iso-rate':
        options.isoRate = Number(value);
        break;
      case '--keep':
        options.keep = true;
        break;
      case '--out':
        options.out = resolve(value ?? options.out);
        break;
      default:
        throw new Error(`unknown option ${arg} (see the head of bench/run.ts)`);
    }
  }
  return options;
}

interface Row {
  scenario: string;
  metric: string;
  value: string;
  target?: string;
  pass?: boolean;
}

interface CpuSnapshot {
  at: number;
  machine: { busy: number; total: number };
  own: NodeJS.CpuUsage;
  hookline?: { pid: number; waited: number };
  pids: Map<number, { cpu: number; kind: 'hookline' | 'receiver' | 'postgres' | 'autovacuum' }>;
}

export interface CpuUse {
  elapsedS: number;
  machineBusyPct: number;
  hooklineCpuS: number;
  /** How long Hookline's main thread was runnable but waiting for a CPU (one process throughout). */
  hooklineRunQueueS?: number;
  postgresCpuS: number;
  autovacuumCpuS: number;
  receiverCpuS: number;
  loadGeneratorCpuS: number;
  orchestratorCpuS: number;
  otherCpuS: number;
}

interface HooklineProcess {
  child: Child;
  baseUrl: string;
  label: string;
}

class Bench {
  readonly sizes: Sizes;
  readonly results: Record<string, unknown> = {};
  readonly rows: Row[] = [];
  readonly cpu: Record<string, CpuUse> = {};
  readonly sql: Record<string, unknown> = {};
  readonly profiles: string[] = [];
  private readonly ceilingRuns: number[] = [];
  private readonly ratioRows: Array<{ row: Row; dispatchRow: Row; perSec: number; allDurable: boolean; key: string }> = [];
  private readonly started = Date.now();
  private readonly tmpDir: string;
  private readonly buildDir: string;
  private readonly logDir: string;
  private readonly profileDir: string;
  readonly registry: ChildRegistry;
  private db?: BenchDatabase;
  private readonly extraDatabases: BenchDatabase[] = [];
  /** Set by Ctrl-C / SIGTERM: no further scenario starts. */
  aborted = false;
  private receiver?: Child;
  private ports: number[] = [];
  private hookline?: HooklineProcess;
  private cleaned = false;

  constructor(
    readonly options: Options,
    private readonly serverUrl: string | undefined,
  ) {
    this.sizes = { ...(options.quick ? QUICK : FULL) };
    if (options.isoRate) this.sizes.isoRate = options.isoRate;
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

  async startHookline(label: string, onSpawn?: (child: Child) => void): Promise<HooklineProcess> {
    if (this.options.profile) mkdirSync(this.profileDir, { recursive: true });
    // HOOKLINE_NODE_FLAGS: Node flags for Hookline only (--trace-gc, say), for diagnosis.
    const execArgv = process.env.HOOKLINE_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
    const child = this.registry.start('hookline-server', {}, { env: this.hooklineEnv(), execArgv });
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
      DISPATCH_CONCURRENCY: String(DISPATCH_CONCURRENCY),
      ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      // Off: one API key drives all the load here, which any deployed limit would cut with 429s;
      // the benchmark measures Hookline, not the limiter (bench/README.md).
      RATE_LIMIT_PER_MINUTE: '0',
      BENCH_SQL_STATS: this.options.sqlStats ? '1' : '0',
      // PostgreSQL session settings for Hookline's connections (auto_explain, say), for diagnosis.
      ...(process.env.PGOPTIONS ? { PGOPTIONS: process.env.PGOPTIONS } : {}),
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

  async api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.hookline!.baseUrl}/api/v1/external${path}`, {
      method,
      headers: { 'x-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
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
    const byKind = { hookline: 0, receiver: 0, postgres: 0, autovacuum: 0 };
    for (const [pid, { cpu, kind }] of end.pids) byKind[kind] += cpu - (start.pids.get(pid)?.cpu ?? 0);
    const own = process.cpuUsage(start.own);
    const orchestratorCpuS = (own.user + own.system) / 1e6;
    const busy = end.machine.busy - start.machine.busy;
    const total = end.machine.total - start.machine.total;
    const use: CpuUse = {
      elapsedS: round((end.at - start.at) / 1000, 2),
      machineBusyPct: round((busy / total) * 100, 1),
      hooklineCpuS: round(byKind.hookline, 2),
      hooklineRunQueueS:
        start.hookline && start.hookline.pid === end.hookline?.pid ? round(end.hookline.waited - start.hookline.waited, 2) : undefined,
      postgresCpuS: round(byKind.postgres, 2),
      autovacuumCpuS: round(byKind.autovacuum, 2),
      receiverCpuS: round(byKind.receiver, 2),
      loadGeneratorCpuS: round(loadGeneratorCpuS, 2),
      orchestratorCpuS: round(orchestratorCpuS, 2),
      otherCpuS: round(
        busy - byKind.hookline - byKind.postgres - byKind.autovacuum - byKind.receiver - loadGeneratorCpuS - orchestratorCpuS,
        2,
      ),
    };
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
  // scenarios

  /**
   * 1. The same receiver driven by undici directly: signed requests, same concurrency, no database.
   * The ceiling is undici's `request` (as issue 6 describes it); `dispatch` is its lower-level API,
   * which Hookline's sender uses and which costs less per request, run once more for comparison.
   */
  async ceiling(label: 'ceiling' | 'ceiling-again' | 'ceiling-dispatch' = 'ceiling'): Promise<void> {
    const s = this.sizes;
    const client = label === 'ceiling-dispatch' ? 'undici-dispatch' : 'undici';
    this.log(
      `1 ${label}: ${client} straight at the receiver, ${DISPATCH_CONCURRENCY} in flight over ${ENDPOINTS} endpoints, ${ENDPOINT_CONCURRENCY} sockets each, ${s.ceilingMs} ms`,
    );
    await this.receiver!.call('clear');
    const cpu = await this.cpuSnapshot();
    const args: LoadHttpArgs = {
      client,
      urls: this.ports.map((_, i) => this.url(i, `/ok/ceiling/${i}`)),
      concurrency: DISPATCH_CONCURRENCY,
      connectionsPerOrigin: ENDPOINT_CONCURRENCY,
      warmupMs: s.ceilingWarmupMs,
      durationMs: s.ceilingMs,
      timeoutMs: DELIVERY_TIMEOUT_MS,
    };
    const result = await this.registry.run<LoadHttpResult>('load-http', args);
    const use = await this.cpuSince(label, cpu, result.totalCpuMs / 1000);
    await this.receiver!.call('clear');
    this.log(`  ${label} ${result.perSec}/s (${result.failures} failures); receiver CPU ${use.receiverCpuS} s`);
    if (label === 'ceiling-dispatch') {
      Object.assign(this.results, { ceilingDispatchPerSec: result.perSec, ceilingDispatchClientCpuUsPerRequest: result.cpuUsPerRequest });
      this.row(
        '1 ceiling',
        "for comparison: deliveries/s through undici's dispatch (Hookline's API), client CPU per request",
        `${result.perSec}, ${result.cpuUsPerRequest} µs`,
      );
      return;
    }
    this.ceilingRuns.push(result.perSec);
    Object.assign(this.results, {
      ceilingPerSec: Math.max(...this.ceilingRuns),
      ceilingRunsPerSec: this.ceilingRuns,
      ceilingFailures: ((this.results.ceilingFailures as number | undefined) ?? 0) + result.failures,
      ceilingClientCpuUsPerRequest: result.cpuUsPerRequest,
    });
    this.row(
      '1 ceiling',
      `deliveries/s (undici → receiver, no DB)${label === 'ceiling' ? '' : `, again before the backlog`}`,
      result.perSec,
    );
    if (label === 'ceiling') this.row('1 ceiling', 'client CPU per request', `${result.cpuUsPerRequest} µs`);
  }

  /** Ratios to the ceiling, once every ceiling run is known (the highest one counts). */
  finishRatios(): void {
    const ceiling = this.results.ceilingPerSec as number | undefined;
    const dispatchCeiling = this.results.ceilingDispatchPerSec as number | undefined;
    for (const { row, dispatchRow, perSec, allDurable, key } of this.ratioRows) {
      const ratio = ceiling ? round(perSec / ceiling, 3) : Number.NaN;
      this.results[key] = ratio;
      row.value = ceiling ? String(ratio) : 'n/a (no ceiling run)';
      row.pass = ceiling ? ratio >= 0.5 && allDurable : undefined;
      if (dispatchCeiling) this.results[`${key}ToDispatch`] = round(perSec / dispatchCeiling, 3);
      dispatchRow.value = dispatchCeiling ? String(round(perSec / dispatchCeiling, 3)) : 'n/a (no ceiling run)';
    }
  }

  /**
   * One autocannon run and the CPU it took, added to `earlier` (the same route's other window).
   * With --profile each window's profile is summarised; the file of the route keeps the last one.
   */
  async apiWindow(name: string, args: ApiLoadArgs, earlier?: CpuUse): Promise<{ result: ApiLoadResult; use: CpuUse }> {
    const cpu = await this.cpuSnapshot();
    const result = await this.registry.run<ApiLoadResult>('api-load', args);
    const use = await this.cpuSince(name, cpu, result.cpuMs / 1000);
    if (earlier) this.cpu[name] = addCpuUse(earlier, use);
    return { result, use };
  }

  /** 7. GET /webhooks with an API key vs a bare @Public route on the same process (autocannon). */
  async managementApi(): Promise<void> {
    const s = this.sizes;
    const base = this.hookline!.baseUrl;
    this.log(
      `7 management API: autocannon, ${s.apiConnections} connections, ${s.apiSec} s per route in two windows (bare, list, list, bare)`,
    );
    const bare: ApiLoadArgs = {
      url: `${base}/api/v1/external/bench/bare`,
      headers: {},
      connections: s.apiConnections,
      durationSec: s.apiSec,
    };
    const list: ApiLoadArgs = {
      url: `${base}/api/v1/external/webhooks`,
      headers: { 'x-api-key': ADMIN_KEY },
      connections: s.apiConnections,
      durationSec: s.apiSec,
    };
    if (s.apiWarmupSec > 0) {
      await this.registry.run<ApiLoadResult>('api-load', { ...bare, durationSec: s.apiWarmupSec });
      await this.registry.run<ApiLoadResult>('api-load', { ...list, durationSec: s.apiWarmupSec });
    }
    // Bare, list, list, bare, each for half the time: a machine whose speed drifts during the 20 s
    // (a neighbour starting or stopping) weighs on both routes alike instead of on one of them.
    const half = s.apiSec / 2;
    const bare1 = await this.apiWindow('api-bare', { ...bare, durationSec: half });
    const list1 = await this.apiWindow('api-webhooks', { ...list, durationSec: half });
    const list2 = await this.apiWindow('api-webhooks', { ...list, durationSec: half }, list1.use);
    const bare2 = await this.apiWindow('api-bare', { ...bare, durationSec: half }, bare1.use);
    this.log(
      `  req/s by window: bare ${bare1.result.perSec}, GET /webhooks ${list1.result.perSec}, GET /webhooks ${list2.result.perSec}, bare ${bare2.result.perSec}`,
    );
    const bareResult = mergeApiLoads(bare1.result, bare2.result);
    const listResult = mergeApiLoads(list1.result, list2.result);
    const ratio = round(listResult.perSec / bareResult.perSec, 3);
    Object.assign(this.results, {
      apiPerSec: listResult.perSec,
      apiCeilingPerSec: bareResult.perSec,
      apiRatio: ratio,
      apiP99Ms: listResult.latencyP99Ms,
      apiCeilingP99Ms: bareResult.latencyP99Ms,
      apiNon2xx: listResult.non2xx + bareResult.non2xx,
      apiErrors: listResult.errors + bareResult.errors,
    });
    this.row('7 API', 'bare route req/s (ceiling)', bareResult.perSec);
    this.row('7 API', 'GET /webhooks req/s (X-API-Key)', listResult.perSec);
    this.row('7 API', 'ratio to the bare route', ratio, '≥ 0.5', ratio >= 0.5);
    this.row('7 API', 'GET /webhooks p50 / p99 latency', `${listResult.latencyP50Ms} / ${listResult.latencyP99Ms} ms`);
    if (listResult.non2xx + bareResult.non2xx + listResult.errors + bareResult.errors > 0) {
      this.row(
        '7 API',
        'non-2xx / errors',
        `${listResult.non2xx + bareResult.non2xx} / ${listResult.errors + bareResult.errors}`,
        '0',
        false,
      );
    }
    this.log(`  bare ${bareResult.perSec}/s, GET /webhooks ${listResult.perSec}/s (ratio ${ratio})`);
  }

  /** 2. Events written in bulk (SQL, large transactions, NOTIFY) to 10 endpoints; arrivals and durability. */
  async throughput(): Promise<void> {
    const s = this.sizes;
    const type: EventType = 'order.created';
    const total = s.throughputEvents * ENDPOINTS;
    this.log(`2 throughput: ${s.throughputEvents} events × ${ENDPOINTS} endpoints = ${total} deliveries, published in bulk (SQL)`);
    const webhookIds = await this.createWebhooks(
      type,
      this.ports.map((_, i) => this.url(i, `/ok/thr/${i}`)),
    );
    await this.receiver!.call('clear');
    await this.resetSqlStats();
    const cpu = await this.cpuSnapshot();
    const published = await bulkPublish(this.db!.pool, {
      storeId: STORE,
      type,
      webhookIds,
      events: s.throughputEvents,
      batchEvents: 200,
      notify: true,
    });
    this.log(`  published ${published.deliveries} deliveries in ${published.ms} ms`);
    const arrived = await this.waitForArrivals('/ok/thr/', total, 30_000);
    const durable = await this.waitForStatus(type, 'succeeded', total, 60_000);
    const use = await this.cpuSince('throughput', cpu);
    await this.collectSqlStats('throughput');
    const attempts = await attemptOutcomes(this.db!.pool, type);
    const { spanMs, perSec, allDurable, durablePerSec } = drainRates(arrived, durable, total);
    Object.assign(this.results, {
      throughputPerSec: allDurable ? perSec : 0,
      throughputArrivalPerSec: perSec,
      throughputDurablePerSec: durablePerSec,
      throughputDeliveries: total,
      throughputAttempts: attempts,
      throughputArrived: arrived.unique,
      throughputDuplicates: arrived.count - arrived.unique,
      throughputSucceededInDb: durable.counts.succeeded ?? 0,
      throughputSpanMs: Math.round(spanMs),
      throughputPublishMs: published.ms,
      throughputDurableLagMs: Math.round(durable.at - arrived.last),
      throughputHooklineCpuMsPerDelivery: round((use.hooklineCpuS * 1000) / total, 3),
      throughputPostgresCpuMsPerDelivery: round((use.postgresCpuS * 1000) / total, 3),
    });
    this.row('2 throughput', `deliveries/s, first → last arrival (${total})`, allDurable ? perSec : `${perSec} (NOT all durable)`);
    this.ratioRow('2 throughput', 'throughputRatio', perSec, allDurable);
    this.row(
      '2 throughput',
      'all succeeded in the DB / duplicates',
      `${durable.counts.succeeded ?? 0} of ${total} / ${arrived.count - arrived.unique}`,
    );
    this.row('2 throughput', 'deliveries/s until all durable', durablePerSec);
    this.row('2 throughput', 'attempts by outcome', formatCounts(attempts));
    this.row(
      '2 throughput',
      'CPU ms per delivery: Hookline / PostgreSQL',
      `${round((use.hooklineCpuS * 1000) / total, 3)} / ${round((use.postgresCpuS * 1000) / total, 3)}`,
    );
    this.log(`  ${perSec}/s first→last arrival over ${Math.round(spanMs)} ms; DB: ${JSON.stringify(durable.counts)}`);
  }

  /**
   * Has the kernel write back what the earlier phases left dirty (`sync`) before a latency
   * measurement. Linux writes a dirty page back 30 s after it was dirtied
   * (vm.dirty_expire_centisecs), all in one go: the 100,000 deliveries of the throughput phase
   * left about 120 MB that went to disk in the middle of the next phase, and a publish's commit
   * (which waits for its WAL flush) then waited up to 280 ms behind it. That stall belongs to the
   * phase that wrote the data, not to the one measuring latency. No CHECKPOINT: the first change
   * to each page after one writes the whole page to the WAL, and the latency runs right after a
   * CHECKPOINT were worse (bench/README.md).
   */
  async settle(): Promise<void> {
    const started = performance.now();
    const synced = spawnSync('sync').status === 0;
    const syncedMs = Math.round(performance.now() - started);
    const collected = collectGarbage();
    this.log(`  ${synced ? 'sync' : 'sync failed'} in ${syncedMs} ms (earlier phases' dirty pages written back)${collected}`);
  }

  /** Publishes through POST /events at a fixed rate and returns publish→arrival times per endpoint. */
  async publishAndMeasure(
    name: string,
    type: EventType,
    prefix: string,
    endpoints: number,
    rate: number,
    warmupMs: number,
    durationMs: number,
  ): Promise<{ latencies: number[]; warmLatencies: number[]; publish: PublisherResult; missing: number; apiMs: number[] }> {
    await this.receiver!.call('clear');
    await this.resetSqlStats();
    const cpu = await this.cpuSnapshot();
    const args: PublisherArgs = {
      baseUrl: this.hookline!.baseUrl,
      apiKey: ADMIN_KEY,
      type,
      data: EVENT_CATALOGUE[type].example,
      ratePerSec: rate,
      warmupMs,
      durationMs,
      connections: 32,
    };
    const publish = await this.registry.run<PublisherResult>('publisher', args);
    const published = publish.ids.filter(Boolean).length;
    await this.waitForArrivals(prefix, published * endpoints, 15_000);
    await this.cpuSince(name, cpu, publish.cpuMs / 1000);
    await this.collectSqlStats(name);
    const arrivals = await this.arrivals(prefix);
    const first = new Map<string, number>();
    for (let i = 0; i < arrivals.id.length; i++) {
      const key = `${arrivals.ep[i]}|${arrivals.id[i]}`;
      const seen = first.get(key);
      if (seen === undefined || arrivals.at[i] < seen) first.set(key, arrivals.at[i]);
    }
    const endpointsSeen = [...new Set(arrivals.ep)];
    const latencies: number[] = [];
    const warmLatencies: number[] = [];
    const apiMs: number[] = [];
    // Latencies by second of the run, to tell a steady tail from a few stalls.
    const bySecond = new Map<number, number[]>();
    // Counted from the end of the warm-up: its seconds (negative) are shown too, not counted.
    const startedAt = publish.sentAt.find((_, i) => !publish.warm[i]) ?? 0;
    let missing = 0;
    for (let i = 0; i < publish.ids.length; i++) {
      if (!publish.ids[i]) continue;
      if (!publish.warm[i]) apiMs.push(publish.answeredAt[i] - publish.sentAt[i]);
      for (const ep of endpointsSeen) {
        const at = first.get(`${ep}|${publish.ids[i]}`);
        if (at === undefined) {
          if (!publish.warm[i]) missing++;
          continue;
        }
        (publish.warm[i] ? warmLatencies : latencies).push(at - publish.sentAt[i]);
        const second = Math.floor((publish.sentAt[i] - startedAt) / 1000);
        if (!bySecond.has(second)) bySecond.set(second, []);
        bySecond.get(second)!.push(at - publish.sentAt[i]);
      }
    }
    if (endpointsSeen.length < endpoints) missing += (endpoints - endpointsSeen.length) * apiMs.length;
    const seconds = [...bySecond].map(([second, values]) => ({ second, ...distribution(values) }));
    const worst = seconds
      .filter((w) => w.second >= 0)
      .sort((a, b) => b.max - a.max)
      .slice(0, 3);
    this.log(`  slowest seconds: ${worst.map((w) => `${w.second}: p50 ${w.p50} p99 ${w.p99} max ${w.max} ms`).join('; ')}`);
    if (this.options.sqlStats && this.hookline) {
      // What Hookline went through in those seconds: its event loop's worst delay, its slow statements.
      type Timeline = { slowSql: Array<[number, number, string]>; loopDelays: Array<[number, number, number]> };
      const timeline = await this.hookline.child.call<Timeline>('timeline');
      for (const w of worst) {
        const from = startedAt + w.second * 1000 - 250;
        const to = from + 1500;
        const quarters = timeline.loopDelays.filter(([at]) => at >= from && at < to);
        const loop = quarters.map(([, ms]) => Math.round(ms));
        const waited = quarters.map(([, , ms]) => Math.round(ms));
        const sql = timeline.slowSql
          .filter(([at]) => at >= from && at < to)
          .map(([, ms, text]) => `${Math.round(ms)} ms ${text.slice(0, 18)}`);
        this.log(
          `    second ${w.second}: event loop delay max per 250 ms [${loop.join(', ')}], main thread waiting for a CPU [${waited.join(', ')}] ms; statements ≥ 10 ms: ${sql.length} ${sql.slice(0, 6).join(', ')}`,
        );
      }
    }
    this.results[`${name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}BySecond`] = seconds.map((w) => [
      w.second,
      w.p50,
      w.p99,
      w.max,
    ]);
    return { latencies, warmLatencies, publish, missing, apiMs };
  }

  /** 3. Publish→arrival at a fixed rate (POST /events) to one endpoint. */
  async latency(): Promise<void> {
    const s = this.sizes;
    this.log(
      `3 latency: POST /events at ${s.latencyRate}/s for ${(s.latencyWarmupMs + s.latencyMs) / 1000} s (first ${s.latencyWarmupMs / 1000} s not counted) to 1 endpoint`,
    );
    await this.createWebhooks('order.updated', [this.url(0, '/ok/lat/0')]);
    await this.settle();
    // A fresh process answers its first POST /events slowly (V8 compiles Nest's request pipeline as
    // it goes): starting cold at 500/s built a queue of up to a second in about half the runs, which
    // then took seconds to drain. The step to 500/s comes after a ramp at 100/s. The ramp is the
    // first time this path runs at a rate in a full run too (the throughput scenario publishes in
    // SQL): after 3 s of it, the first second at 500/s had a p50 of 12-18 ms (72.5 once) against
    // 2.1-4.0 ms in a median second of the phase; after 15 s, 4.7-9.5 ms (bench/README.md, twelfth session).
    this.log(`  ramp: 100/s for ${s.latencyRampMs / 1000} s (not counted)`);
    const ramp = await this.publishAndMeasure('latency-ramp', 'order.updated', '/ok/lat/', 1, 100, 0, s.latencyRampMs);
    const { latencies, warmLatencies, publish, missing, apiMs } = await this.publishAndMeasure(
      'latency',
      'order.updated',
      '/ok/lat/',
      1,
      s.latencyRate,
      s.latencyWarmupMs,
      s.latencyMs,
    );
    const rampD = distribution(ramp.latencies);
    const warmD = distribution(warmLatencies);
    Object.assign(this.results, { latencyRampP99Ms: rampD.p99, latencyWarmupP99Ms: warmD.p99 });
    const d = distribution(latencies);
    const api = distribution(apiMs);
    Object.assign(this.results, {
      latencyP50Ms: d.p50,
      latencyP95Ms: d.p95,
      latencyP99Ms: d.p99,
      latencyMaxMs: d.max,
      latencyMeanMs: d.mean,
      latencyEvents: d.count,
      latencyMissing: missing,
      latencyPublishErrors: publish.errors,
      latencyAchievedRatePerSec: publish.achievedPerSec,
      publishApiP50Ms: api.p50,
      publishApiP99Ms: api.p99,
    });
    this.row(
      '3 latency',
      `publish → arrival p50 / p95 / p99 / max (${d.count} events at ${publish.achievedPerSec}/s)`,
      `${d.p50} / ${d.p95} / ${d.p99} / ${d.max} ms`,
      'p99 ≤ 25 ms',
      d.p99 <= 25 && missing === 0,
    );
    this.row('3 latency', 'POST /events answered p50 / p99', `${api.p50} / ${api.p99} ms`);
    this.row(
      '3 latency',
      `not counted: p99 of the ramp at 100/s / of the first ${s.latencyWarmupMs / 1000} s at ${s.latencyRate}/s`,
      `${rampD.p99} / ${warmD.p99} ms`,
    );
    if (missing || publish.errors)
      this.row('3 latency', 'missing deliveries / publish errors', `${missing} / ${publish.errors}`, '0', false);
    this.log(`  p50 ${d.p50} p95 ${d.p95} p99 ${d.p99} max ${d.max} ms; POST /events p50 ${api.p50} p99 ${api.p99} ms; missing ${missing}`);
    if (this.options.quick) return;
    // For diagnosis: the same path well below saturation, so that queueing and path latency can be told apart.
    const lowRate = 100;
    this.log(`3b latency at ${lowRate}/s (same endpoint), for comparison`);
    await this.settle();
    const low = await this.publishAndMeasure('latency-100', 'order.updated', '/ok/lat/', 1, lowRate, s.latencyWarmupMs, s.latencyMs / 2);
    const l = distribution(low.latencies);
    Object.assign(this.results, { latencyAt100P50Ms: l.p50, latencyAt100P99Ms: l.p99, latencyAt100MaxMs: l.max });
    this.row(
      '3 latency',
      `for comparison, at ${lowRate}/s: p50 / p95 / p99 / max (${l.count})`,
      `${l.p50} / ${l.p95} / ${l.p99} / ${l.max} ms`,
    );
    this.log(`  at ${lowRate}/s: p50 ${l.p50} p99 ${l.p99} max ${l.max} ms`);
  }

  /** 5. Ten endpoints all healthy, then nine healthy and one that never answers. */
  async isolation(): Promise<void> {
    const s = this.sizes;
    this.log(
      `5 isolation: ${s.isoRate} events/s × ${ENDPOINTS} endpoints for ${(s.isoWarmupMs + s.isoMs) / 1000} s, all healthy, then one never answering (DELIVERY_TIMEOUT_MS=${DELIVERY_TIMEOUT_MS})`,
    );
    await this.createWebhooks(
      'order.completed',
      this.ports.map((_, i) => this.url(i, `/ok/isob/${i}`)),
    );
    await this.settle();
    const healthy = await this.publishAndMeasure(
      'isolation-healthy',
      'order.completed',
      '/ok/isob/',
      ENDPOINTS,
      s.isoRate,
      s.isoWarmupMs,
      s.isoMs,
    );
    const urls = this.ports.map((_, i) => (i === ENDPOINTS - 1 ? this.url(i, `/hang/isoh/${i}`) : this.url(i, `/ok/isoh/${i}`)));
    const ids = await this.createWebhooks('product.updated', urls);
    await this.settle();
    const isolated = await this.publishAndMeasure(
      'isolation-one-hanging',
      'product.updated',
      '/ok/isoh/',
      ENDPOINTS - 1,
      s.isoRate,
      s.isoWarmupMs,
      s.isoMs,
    );
    const hangAttempts = (await this.summary('/hang/isoh/')).count;
    // Stop the dead endpoint's retries from running into the next scenarios.
    await this.api('PUT', `/webhooks/${ids[ENDPOINTS - 1]}`, { isActive: false });
    await this.receiver!.call('release');
    const h = distribution(healthy.latencies);
    const i = distribution(isolated.latencies);
    const ratio = round(i.p99 / h.p99, 2);
    const hApi = distribution(healthy.apiMs);
    const iApi = distribution(isolated.apiMs);
    Object.assign(this.results, {
      healthyPublishP99Ms: hApi.p99,
      isolatedPublishP99Ms: iApi.p99,
      healthyP50Ms: h.p50,
      healthyP99Ms: h.p99,
      isolatedP50Ms: i.p50,
      isolatedP99Ms: i.p99,
      isolatedMaxMs: i.max,
      isolationRatio: ratio,
      isolationRatePerSec: s.isoRate,
      isolationHealthyDeliveries: h.count,
      isolationIsolatedDeliveries: i.count,
      isolationMissing: healthy.missing + isolated.missing,
      isolationHangingAttempts: hangAttempts,
    });
    this.row('5 isolation', `all healthy: p50 / p99 (${h.count} deliveries)`, `${h.p50} / ${h.p99} ms`);
    this.row('5 isolation', `one hanging: healthy p50 / p99 (${i.count})`, `${i.p50} / ${i.p99} ms`);
    this.row('5 isolation', 'isolated p99 / healthy p99', ratio, '≤ 2', ratio <= 2 && isolated.missing === 0);
    this.row('5 isolation', 'POST /events answered p99: all healthy / one hanging', `${hApi.p99} / ${iApi.p99} ms`);
    this.row('5 isolation', 'attempts that reached the hanging endpoint', hangAttempts);
    if (healthy.missing || isolated.missing)
      this.row('5 isolation', 'missing healthy deliveries', healthy.missing + isolated.missing, '0', false);
    this.log(`  healthy p99 ${h.p99} ms, isolated p99 ${i.p99} ms (×${ratio}); ${hangAttempts} attempts hung`);
  }

  /** 4. Endpoints answering 500: the gaps between attempts 1→2 and 2→3 at the receiver. */
  async retry(): Promise<void> {
    const s = this.sizes;
    const type: EventType = 'payment.received';
    this.log(
      `4 retry timing: ${s.retryEvents} events × ${s.retryEndpoints} endpoints answering 500, schedule ${RETRY_SCHEDULE_MS.join(',')} ms`,
    );
    await this.createWebhooks(
      type,
      Array.from({ length: s.retryEndpoints }, (_, i) => this.url(i, `/fail/retry/${i}`)),
    );
    await this.receiver!.call('clear');
    const cpu = await this.cpuSnapshot();
    const publish = await this.registry.run<PublisherResult>('publisher', {
      baseUrl: this.hookline!.baseUrl,
      apiKey: ADMIN_KEY,
      type,
      data: EVENT_CATALOGUE[type].example,
      ratePerSec: s.retryRate,
      warmupMs: 0,
      durationMs: (s.retryEvents / s.retryRate) * 1000,
      connections: 16,
    } satisfies PublisherArgs);
    const deliveries = publish.ids.filter(Boolean).length * s.retryEndpoints;
    // The receiver first, then the database: counting statuses scans the deliveries table (some
    // 140,000 rows by now), and polling it every 100 ms while the retries ran took a fifth of a
    // core from the processes being timed.
    await this.waitForArrivals('/fail/retry/', deliveries * RETRY_SCHEDULE_MS.length, 4 * DELIVERY_TIMEOUT_MS + 5000, 'attempts');
    const failed = await this.waitForStatus(type, 'failed', deliveries, 4 * DELIVERY_TIMEOUT_MS + 5000 + 20_000);
    await this.cpuSince('retry', cpu, publish.cpuMs / 1000);
    const arrivals = await this.arrivals('/fail/retry/');
    const byDelivery = new Map<string, number[]>();
    for (let i = 0; i < arrivals.id.length; i++) {
      const key = `${arrivals.ep[i]}|${arrivals.id[i]}`;
      const list = byDelivery.get(key) ?? [];
      list.push(arrivals.at[i]);
      byDelivery.set(key, list);
    }
    const gap1: number[] = [];
    const gap2: number[] = [];
    let wrongAttemptCount = 0;
    const outOfRange: string[] = [];
    const inRange = (value: number, target: number): boolean => Math.abs(value - target) <= target * 0.15;
    for (const [key, times] of byDelivery) {
      times.sort((a, b) => a - b);
      if (times.length !== RETRY_SCHEDULE_MS.length) wrongAttemptCount++;
      // The gaps 1→2 and 2→3, each against its own delay.
      const gaps = times.slice(1, 3).map((at, i) => at - times[i]);
      if (gaps.length >= 1) gap1.push(gaps[0]);
      if (gaps.length >= 2) gap2.push(gaps[1]);
      if (gaps.some((gap, i) => !inRange(gap, RETRY_SCHEDULE_MS[i + 1]))) outOfRange.push(key);
    }
    const within = (values: number[], target: number): boolean => values.length > 0 && values.every((v) => inRange(v, target));
    await this.explainRetryGaps(outOfRange.slice(0, 5), byDelivery, publish.sentAt[0] ?? 0);
    Object.assign(this.results, {
      retryGap1Ms: round(mean(gap1), 1),
      retryGap1MinMs: round(min(gap1), 1),
      retryGap1MaxMs: round(max(gap1), 1),
      retryGap1P99Ms: round(percentile(gap1, 99), 1),
      retryGap2Ms: round(mean(gap2), 1),
      retryGap2MinMs: round(min(gap2), 1),
      retryGap2MaxMs: round(max(gap2), 1),
      retryGap2P99Ms: round(percentile(gap2, 99), 1),
      retryDeliveries: byDelivery.size,
      retryExpectedDeliveries: deliveries,
      retryWrongAttemptCount: wrongAttemptCount,
      retryFailedInDb: failed.counts.failed ?? 0,
    });
    const ok1 = within(gap1, RETRY_SCHEDULE_MS[1]);
    const ok2 = within(gap2, RETRY_SCHEDULE_MS[2]);
    this.row(
      '4 retry',
      `gap 1→2 mean / min / max (${gap1.length})`,
      `${round(mean(gap1), 1)} / ${round(min(gap1), 1)} / ${round(max(gap1), 1)} ms`,
      '1000 ± 15 %',
      ok1,
    );
    this.row(
      '4 retry',
      `gap 2→3 mean / min / max (${gap2.length})`,
      `${round(mean(gap2), 1)} / ${round(min(gap2), 1)} / ${round(max(gap2), 1)} ms`,
      '4000 ± 15 %',
      ok2,
    );
    this.row(
      '4 retry',
      'deliveries failed in DB / with ≠ 3 attempts',
      `${failed.counts.failed ?? 0} of ${deliveries} / ${wrongAttemptCount}`,
      `${deliveries} / 0`,
      (failed.counts.failed ?? 0) === deliveries && wrongAttemptCount === 0 && byDelivery.size === deliveries,
    );
    this.log(
      `  gap1 mean ${round(mean(gap1), 1)} [${round(min(gap1), 1)}, ${round(max(gap1), 1)}] ms, gap2 mean ${round(mean(gap2), 1)} [${round(min(gap2), 1)}, ${round(max(gap2), 1)}] ms`,
    );
  }

  /**
   * For retry gaps out of range (rare: one in 2,000 in some full runs), what the database says of
   * the delivery: when each attempt started, next to when it arrived, and how far into the phase.
   * An attempt that started late means its claim came late; one that started on time and arrived
   * late, a slow send.
   */
  async explainRetryGaps(keys: string[], arrivals: Map<string, number[]>, phaseStart: number): Promise<void> {
    const explained: Array<Record<string, unknown>> = [];
    for (const key of keys) {
      const [endpoint, eventId] = key.split('|');
      const { rows } = await this.db!.pool.query<{ id: string; number: number; started: number }>(
        `SELECT d.id, a.number, extract(epoch FROM a.started_at) * 1000 AS started
         FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN delivery_attempts a ON a.delivery_id = d.id
         WHERE d.event_id = $1 AND w.url = $2 ORDER BY a.number`,
        [eventId, this.url(Number(endpoint), `/fail/retry/${endpoint}`)],
      );
      const times = arrivals.get(key) ?? [];
      const first = times[0] ?? 0;
      const entry = {
        delivery: rows[0]?.id,
        atPhaseMs: Math.round(first - phaseStart),
        arrivedMs: times.map((t) => Math.round(t - first)),
        startedMs: rows.map((row) => Math.round(Number(row.started) - first)),
      };
      explained.push(entry);
      this.log(
        `  ! retry gap out of range: ${entry.delivery} (endpoint ${endpoint}), ${entry.atPhaseMs} ms into the phase: arrived at +${entry.arrivedMs.join(', +')} ms, attempts started (DB) at +${entry.startedMs.join(', +')} ms`,
      );
    }
    if (explained.length > 0) this.results.retryOutOfRange = explained;
  }

  /** 6. A backlog inserted while no worker runs, drained by one fresh process. */
  async backlog(): Promise<void> {
    const s = this.sizes;
    const type: EventType = 'customer.created';
    const total = s.backlogEvents * ENDPOINTS;
    this.log(
      `6 backlog: ${total} pending deliveries (${s.backlogEvents} events × ${ENDPOINTS} endpoints) inserted directly, drained by one fresh Hookline`,
    );
    const webhookIds = await this.createWebhooks(
      type,
      this.ports.map((_, i) => this.url(i, `/ok/backlog/${i}`)),
    );
    await this.stopHookline();
    // The machine's ceiling again, now (other load on a shared machine varies); the highest run counts.
    if (this.has('ceiling')) await this.ceiling('ceiling-again');
    const published = await bulkPublish(this.db!.pool, {
      storeId: STORE,
      type,
      webhookIds,
      events: s.backlogEvents,
      batchEvents: 2000,
      notify: false,
    });
    this.log(`  inserted ${published.deliveries} pending deliveries in ${published.ms} ms`);
    await this.db!.pool.query('VACUUM ANALYZE deliveries');
    await this.receiver!.call('clear');
    const cpu = await this.cpuSnapshot();
    const startedAt = Date.now();
    // Sampled from the moment the process exists: it starts draining before it listens.
    let sampler: RssSampler | undefined;
    const hookline = await this.startHookline('backlog', (child) => {
      sampler = new RssSampler(child.pid);
      sampler.start(100);
    });
    const readyMs = Date.now() - startedAt;
    await this.profileStart();
    const heap = { heapUsedMb: 0, heapTotalMb: 0, externalMb: 0, arrayBuffersMb: 0 };
    const heapTimer = setInterval(() => {
      void hookline.child
        .call<NodeJS.MemoryUsage>('memory')
        .then((m) => {
          heap.heapUsedMb = Math.max(heap.heapUsedMb, round(m.heapUsed / 2 ** 20, 1));
          heap.heapTotalMb = Math.max(heap.heapTotalMb, round(m.heapTotal / 2 ** 20, 1));
          heap.externalMb = Math.max(heap.externalMb, round(m.external / 2 ** 20, 1));
          heap.arrayBuffersMb = Math.max(heap.arrayBuffersMb, round(m.arrayBuffers / 2 ** 20, 1));
        })
        .catch(() => undefined);
    }, 500);
    const arrived = await this.waitForArrivals('/ok/backlog/', total, 30_000);
    const durable = await this.waitForStatus(type, 'succeeded', total, 120_000);
    const memory = processMemoryMb(hookline.child.pid);
    sampler!.stop();
    clearInterval(heapTimer);
    // What is still alive once the work is done (a full collection): a leak, or a lazily collected heap?
    const afterGc = await hookline.child.call<NodeJS.MemoryUsage>('gcMemory');
    const heapAfterGcMb = round(afterGc.heapUsed / 2 ** 20, 1);
    const use = await this.cpuSince('backlog', cpu);
    await this.collectSqlStats('backlog');
    const attempts = await attemptOutcomes(this.db!.pool, type);
    const peakRssMb = round(Math.max(memory?.peakRssMb ?? 0, sampler!.peakMb), 1);
    const { spanMs, perSec, allDurable, durablePerSec } = drainRates(arrived, durable, total);
    Object.assign(this.results, {
      backlogPerSec: allDurable ? perSec : 0,
      backlogDurablePerSec: durablePerSec,
      backlogDeliveries: total,
      backlogAttempts: attempts,
      backlogArrived: arrived.unique,
      backlogDuplicates: arrived.count - arrived.unique,
      backlogSucceededInDb: durable.counts.succeeded ?? 0,
      backlogSpanMs: Math.round(spanMs),
      backlogPeakRssMb: peakRssMb,
      backlogRssAfterMb: round(memory?.rssMb ?? Number.NaN, 1),
      backlogPeakHeap: heap,
      backlogHeapAfterGcMb: heapAfterGcMb,
      backlogStartToReadyMs: readyMs,
      backlogHooklineCpuMsPerDelivery: round((use.hooklineCpuS * 1000) / total, 3),
      backlogPostgresCpuMsPerDelivery: round((use.postgresCpuS * 1000) / total, 3),
    });
    this.row('6 backlog', `deliveries/s draining ${total}`, allDurable ? perSec : `${perSec} (NOT all durable)`);
    this.ratioRow('6 backlog', 'backlogRatio', perSec, allDurable);
    this.row('6 backlog', 'peak RSS of the Hookline process (VmHWM)', `${peakRssMb} MB`, '< 300 MB', peakRssMb < 300);
    this.row(
      '6 backlog',
      'peak V8 heap used / total, external (sampled every 0.5 s); heap used after a full GC at the end',
      `${heap.heapUsedMb} / ${heap.heapTotalMb}, ${heap.externalMb}; ${heapAfterGcMb} MB`,
    );
    this.row(
      '6 backlog',
      'all succeeded in the DB / duplicates',
      `${durable.counts.succeeded ?? 0} of ${total} / ${arrived.count - arrived.unique}`,
    );
    this.row('6 backlog', 'attempts by outcome', formatCounts(attempts));
    this.row(
      '6 backlog',
      'CPU ms per delivery: Hookline / PostgreSQL',
      `${round((use.hooklineCpuS * 1000) / total, 3)} / ${round((use.postgresCpuS * 1000) / total, 3)}`,
    );
    this.log(`  ${perSec}/s over ${Math.round(spanMs)} ms, peak RSS ${peakRssMb} MB; DB: ${JSON.stringify(durable.counts)}`);
    await this.stopHookline();
  }

  /** 6b. The claim statement's time with 0 and with 2,000,000 finished rows in deliveries. */
  async claim(): Promise<void> {
    const s = this.sizes;
    this.log(
      `6 claim: DeliveryRepository.claimDue(${500}) from ${s.claimPending} due deliveries, with 0 and ${s.claimFinished} finished rows besides`,
    );
    const result = await measureClaim(
      this.serverUrl!,
      { pending: s.claimPending, finished: s.claimFinished, runs: s.claimRuns, batch: 500 },
      (line) => this.log(line),
      (db) => this.extraDatabases.push(db),
    );
    const ratio = round(result.atLarge.claimMedianMs / result.at0.claimMedianMs, 2);
    Object.assign(this.results, {
      claimMsAt0: result.at0.claimMedianMs,
      claimMsAt2M: result.atLarge.claimMedianMs,
      claimRatio: ratio,
      claimFinishedRows: s.claimFinished,
      claimPendingRows: s.claimPending,
      claimRowsAt0: result.at0.rowsInTable,
      claimRowsAtLarge: result.atLarge.rowsInTable,
      claimP90MsAt0: result.at0.claimP90Ms,
      claimP90MsAt2M: result.atLarge.claimP90Ms,
      claimEmptyTableMs: result.emptyTableClaimMs,
      recordOutcomesMsAt0: result.at0.recordMedianMs,
      recordOutcomesMsAt2M: result.atLarge.recordMedianMs,
      nextDueMsAt0: result.at0.nextDueMedianMs,
      nextDueMsAt2M: result.atLarge.nextDueMedianMs,
      claimFinishedInsertMs: result.finishedRowsInsertMs,
      claimPlanAt0: result.at0.plan,
      claimPlanAt2M: result.atLarge.plan,
    });
    const large = s.claimFinished >= 1_000_000 ? `${s.claimFinished / 1_000_000}M` : `${s.claimFinished / 1000}k`;
    this.row(
      '6 claim',
      `claim of 500 (median): 0 → ${large} finished rows`,
      `${result.at0.claimMedianMs} → ${result.atLarge.claimMedianMs} ms`,
      'within 2×',
      ratio <= 2,
    );
    this.row(
      '6 claim',
      `recordOutcomes of 500 (median): 0 → ${large}`,
      `${result.at0.recordMedianMs} → ${result.atLarge.recordMedianMs} ms`,
    );
    this.row('6 claim', `nextDueAt (median): 0 → ${large}`, `${result.at0.nextDueMedianMs} → ${result.atLarge.nextDueMedianMs} ms`);
    this.log(
      `  claim ${result.at0.claimMedianMs} ms at ${result.at0.rowsInTable} rows, ${result.atLarge.claimMedianMs} ms at ${result.atLarge.rowsInTable} rows`,
    );
  }

  readonly errors: Record<string, string> = {};

  /** Runs one scenario if selected; a failure is recorded and the next scenario still runs. */
  async attempt(scenario: Scenario, run: () => Promise<void>): Promise<void> {
    if (!this.has(scenario) || this.aborted) return;
    try {
      await run();
    } catch (error) {
      const message = String((error as Error)?.stack ?? error);
      this.errors[scenario] = message;
      this.row(scenario, 'FAILED', message.split('\n')[0].replace(/\|/g, '/').slice(0, 160), 'completes', false);
      console.error(`scenario ${scenario} failed: ${message}`);
      if (this.hookline && !this.hookline.child.running) {
        this.hookline = undefined;
        if (['api', 'throughput', 'latency', 'isolation', 'retry', 'backlog'].some((s) => this.has(s as Scenario)))
          await this.startHookline('restarted');
      }
    }
  }

  async runAll(): Promise<void> {
    await this.prepare();
    await this.prepareDatabase();
    await this.attempt('ceiling', () => this.ceiling());
    await this.attempt('ceiling', () => this.ceiling('ceiling-dispatch'));
    const needsHookline = SCENARIOS.filter((s) => s !== 'ceiling' && s !== 'claim').some((s) => this.has(s));
    if (needsHookline) {
      const hookline = await this.startHookline('main');
      await sleep(500);
      this.results.idleRssMb = round(processMemoryMb(hookline.child.pid)?.rssMb ?? Number.NaN, 1);
      // Ten endpoints in the store's list for GET /webhooks, subscribed to a type never published here.
      await this.createWebhooks(
        'customer.updated',
        this.ports.map((_, i) => this.url(i, `/ok/unused/${i}`)),
      );
    }
    await this.attempt('api', () => this.managementApi());
    await this.attempt('throughput', () => this.throughput());
    await this.attempt('latency', () => this.latency());
    await this.attempt('isolation', () => this.isolation());
    await this.attempt('retry', () => this.retry());
    await this.attempt('backlog', () => this.backlog());
    await this.stopHookline();
    await this.attempt('claim', () => this.claim());
    this.finishRatios();
  }

  async runClients(): Promise<ClientComparison> {
    await this.prepare();
    this.log(`HTTP clients: ${this.sizes.clientsMs} ms per run, ${this.sizes.clientsRounds} round(s)`);
    return compareHttpClients(
      this.registry,
      this.ports,
      { warmupMs: this.sizes.clientsWarmupMs, durationMs: this.sizes.clientsMs, rounds: this.sizes.clientsRounds },
      (line) => this.log(line),
    );
  }

  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    await this.registry.stopAll(10_000).catch(() => undefined);
    for (const db of [this.db, ...this.extraDatabases]) {
      if (db) await db.drop().catch((error: unknown) => console.error(`could not drop ${db.name}: ${String(error)}`));
    }
    if (this.options.keep) this.log(`kept ${this.tmpDir}`);
    else rmSync(this.tmpDir, { recursive: true, force: true });
  }

  /** Stale databases of runs that were killed (SIGKILL leaves no chance to clean up). */
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

/**
 * A full collection of the orchestrator's heap (90-120 MB after transpiling, about half of it
 * garbage) now, between phases, when `npm run bench` exposed `gc`. With the memory reducer off
 * (package.json), nothing else collects it while a phase is measured. Returns what to log.
 */
function collectGarbage(): string {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return '';
  const started = performance.now();
  gc();
  return `; orchestrator's heap collected in ${Math.round(performance.now() - started)} ms`;
}

/**
 * A drain's rates (throughput, backlog): distinct arrivals per second from first to last arrival,
 * and per second until the database showed all `total` succeeded (0 unless all did).
 */
function drainRates(
  arrived: ArrivalSummary,
  durable: { at: number; counts: Record<string, number> },
  total: number,
): { spanMs: number; perSec: number; allDurable: boolean; durablePerSec: number } {
  const spanMs = arrived.last - arrived.first;
  const allDurable = (durable.counts.succeeded ?? 0) === total && arrived.unique === total;
  return {
    spanMs,
    perSec: Math.round(arrived.unique / (spanMs / 1000)),
    allDurable,
    durablePerSec: allDurable ? Math.round(total / ((durable.at - arrived.first) / 1000)) : 0,
  };
}

/** Two windows of one route, equally long: requests/s and p50 averaged, the worse p99, counts added. */
function mergeApiLoads(a: ApiLoadResult, b: ApiLoadResult): ApiLoadResult {
  return {
    perSec: Math.round((a.perSec + b.perSec) / 2),
    requests: a.requests + b.requests,
    non2xx: a.non2xx + b.non2xx,
    errors: a.errors + b.errors,
    timeouts: a.timeouts + b.timeouts,
    latencyP50Ms: round((a.latencyP50Ms + b.latencyP50Ms) / 2, 1),
    latencyP99Ms: Math.max(a.latencyP99Ms, b.latencyP99Ms),
    cpuMs: a.cpuMs + b.cpuMs,
  };
}

/** The CPU use of two windows of one phase as one: seconds added, the machine's busy share weighted by time. */
function addCpuUse(a: CpuUse, b: CpuUse): CpuUse {
  const elapsedS = a.elapsedS + b.elapsedS;
  return {
    elapsedS: round(elapsedS, 2),
    machineBusyPct: round((a.machineBusyPct * a.elapsedS + b.machineBusyPct * b.elapsedS) / elapsedS, 1),
    hooklineCpuS: round(a.hooklineCpuS + b.hooklineCpuS, 2),
    hooklineRunQueueS:
      a.hooklineRunQueueS === undefined || b.hooklineRunQueueS === undefined
        ? undefined
        : round(a.hooklineRunQueueS + b.hooklineRunQueueS, 2),
    postgresCpuS: round(a.postgresCpuS + b.postgresCpuS, 2),
    autovacuumCpuS: round(a.autovacuumCpuS + b.autovacuumCpuS, 2),
    receiverCpuS: round(a.receiverCpuS + b.receiverCpuS, 2),
    loadGeneratorCpuS: round(a.loadGeneratorCpuS + b.loadGeneratorCpuS, 2),
    orchestratorCpuS: round(a.orchestratorCpuS + b.orchestratorCpuS, 2),
    otherCpuS: round(a.otherCpuS + b.otherCpuS, 2),
  };
}

function formatCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([outcome, count]) => `${outcome}: ${count}`)
    .join('; ');
}

function formatTable(rows: Row[]): string {
  const lines = ['| scenario | metric | value | target | met |', '|---|---|---:|---|:---:|'];
  for (const row of rows) {
    lines.push(
      `| ${row.scenario} | ${row.metric} | ${row.value} | ${row.target ?? ''} | ${row.pass === undefined ? '' : row.pass ? 'yes' : '**no**'} |`,
    );
  }
  return lines.join('\n');
}

function formatCpu(cpu: Record<string, CpuUse>): string {
  const lines = [
    '| phase | s | machine busy | Hookline | Hookline main thread waiting for a CPU | PostgreSQL (Hookline backends) | autovacuum (bench DB) | receiver | load generator | orchestrator | everything else |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [name, c] of Object.entries(cpu)) {
    lines.push(
      `| ${name} | ${c.elapsedS} | ${c.machineBusyPct} % | ${c.hooklineCpuS} s | ${c.hooklineRunQueueS === undefined ? '–' : `${c.hooklineRunQueueS} s`} | ${c.postgresCpuS} s | ${c.autovacuumCpuS} s | ${c.receiverCpuS} s | ${c.loadGeneratorCpuS} s | ${c.orchestratorCpuS} s | ${c.otherCpuS} s |`,
    );
  }
  return lines.join('\n');
}

async function machineInfo(serverUrl: string | undefined): Promise<Record<string, unknown>> {
  let postgres: string | undefined;
  if (serverUrl)
    postgres = (await adminQuery<{ v: string }>(serverUrl, "SELECT current_setting('server_version') AS v").catch(() => []))[0]?.v;
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGb: round(os.totalmem() / 2 ** 30, 1),
    node: process.version,
    postgres,
    loadAverageAtStart: os.loadavg().map((v) => round(v, 2)),
    kernel: os.release(),
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const serverUrl = process.env.DATABASE_URL;
  if (!options.clients && !serverUrl) {
    console.error('DATABASE_URL is required (a PostgreSQL server; the benchmark creates and drops its own database on it)');
    process.exit(2);
  }
  const bench = new Bench(options, serverUrl);
  const onSignal = (signal: NodeJS.Signals): void => {
    console.error(`${signal}: cleaning up`);
    bench.aborted = true;
    void bench.cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => bench.registry.killAllNow());
  const machine = await machineInfo(serverUrl);
  const started = Date.now();
  let failed = false;
  try {
    if (options.clients) {
      const comparison = await bench.runClients();
      const out = join(ROOT, 'bench', 'results-http-clients.json');
      writeFileSync(out, `${JSON.stringify({ quick: options.quick, machine, comparison }, null, 2)}\n`);
      console.log(`\nnpm run bench -- --clients${options.quick ? ' --quick' : ''}\n`);
      console.log(formatComparison(comparison));
      console.log(`\nwritten to ${out}`);
      return;
    }
    await bench.dropStaleDatabases();
    await bench.runAll();
  } catch (error) {
    failed = true;
    console.error(`benchmark failed: ${String((error as Error)?.stack ?? error)}`);
  } finally {
    await bench.cleanup();
  }
  if (options.clients) return;
  // Phases in which other processes took more than a fifth of the machine: their figures are suspect.
  const noisyPhases = Object.entries(bench.cpu)
    .filter(([, c]) => c.otherCpuS > 0.2 * c.elapsedS * os.cpus().length)
    .map(([name, c]) => `${name} (${Math.round((c.otherCpuS / (c.elapsedS * os.cpus().length)) * 100)} %)`);
  const results = {
    ...bench.results,
    noisyPhases,
    quick: options.quick,
    complete: !failed && Object.keys(bench.errors).length === 0,
    errors: bench.errors,
    scenarios: [...options.only],
    durationSec: Math.round((Date.now() - started) / 1000),
    finishedAt: new Date().toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    config: {
      DELIVERY_TIMEOUT_MS,
      RETRY_SCHEDULE_MS: RETRY_SCHEDULE_MS.join(','),
      DISPATCH_CONCURRENCY,
      ENDPOINT_CONCURRENCY,
      LOG_LEVEL: options.logLevel,
      NODE_ENV: 'production',
      endpoints: ENDPOINTS,
      sizes: bench.sizes,
    },
    machine,
    targets: Object.fromEntries(bench.rows.filter((r) => r.pass !== undefined).map((r) => [`${r.scenario}: ${r.metric}`, r.pass])),
    cpu: bench.cpu,
    sqlStats: bench.sql,
    profiles: bench.profiles,
  };
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(
    `\n${results.command}  (${results.durationSec} s, ${String(machine.cpus)} × ${String(machine.cpuModel)}, Node ${process.version}, PostgreSQL ${String(machine.postgres)})\n`,
  );
  console.log(formatTable(bench.rows));
  console.log(`\nCPU time by process during each phase:\n`);
  console.log(formatCpu(bench.cpu));
  if (noisyPhases.length > 0) {
    console.log(
      `\nWARNING: other processes used more than 20 % of the machine during: ${noisyPhases.join(', ')}. Those figures are unreliable; run again on a quiet machine.`,
    );
  }
  console.log(`\nresults written to ${options.out}`);
  if (failed || Object.keys(bench.errors).length > 0) process.exitCode = 1;
}

void main();
