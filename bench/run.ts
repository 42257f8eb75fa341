/**
 * Hookline's benchmark: `npm run bench` (full, several minutes) or `npm run bench -- --quick`
 * (under a minute), against the PostgreSQL server of DATABASE_URL, on which it creates and drops
 * its own databases. See bench/README.md for what each scenario measures.
 *
 * Processes: this orchestrator; the receiver (bench/receiver.ts); Hookline (bench/hookline-server.ts);
 * load generators (bench/load-http.ts, bench/publisher.ts, bench/api-load.ts), each started when
 * needed. src/ and bench/ are transpiled once into a temporary directory and run as plain JavaScript.
 * The scenarios are in bench/scenarios/, what they share in bench/lib/.
 *
 * Options:
 *   --quick            every scenario shrunk; under 60 s
 *   --clients          only the HTTP-client study (bench/studies/http-clients.ts); no database needed
 *   --only=a,b         only these scenarios: ceiling, api, throughput, publish-filtered, latency, isolation, retry, ratelimit, ordered,
 *                      backlog, peers, claim, retention, noisy-neighbour, many-stores, storage
 *   --profile          run Hookline under --cpu-prof (profiles in bench/profiles/) and print where its time goes
 *   --sql-stats        time Hookline's SQL statements per scenario (pg driver wrapper) and print the top ones
 *   --log-level=L      Hookline's LOG_LEVEL (default info, as deployed)
 *   --iso-rate=N       events/s of the isolation scenario (default 100; each fans out to 10 endpoints)
 *   --workers=1,2,4    peers scenario: Hookline also drains with this many ROLE=worker processes
 *   --workers-share    with --workers: the processes share Hookline's best DISPATCH_CONCURRENCY (each gets 1/N)
 *   --contenders=a,b   peers scenario: only these of ceiling, pg-boss, bullmq, hookline
 *   --deliveries=N     peers scenario: N deliveries per drain
 *   --claim-finished=N claim scenario: N finished deliveries beside the due ones (default 2,000,000)
 *   --keep             keep the temporary directory (transpiled code, child logs) and the databases
 *   --out=FILE         where to write the results (default bench/results.json)
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { compareHttpClients, formatComparison, type ClientComparison } from './studies/http-clients';
import { Bench } from './lib/bench';
import { sleep } from './lib/children';
import {
  DELIVERY_TIMEOUT_MS,
  DISPATCH_CONCURRENCY,
  ENDPOINT_CONCURRENCY,
  ENDPOINTS,
  Options,
  RETRY_SCHEDULE_MS,
  ROOT,
  Scenario,
  SCENARIOS,
} from './lib/config';
import { formatCpu } from './lib/cpu';
import { processMemoryMb } from './lib/proc';
import { formatTable, machineInfo } from './lib/report';
import { round } from './lib/stats';
import { managementApi } from './scenarios/api';
import { peers } from './scenarios/peers';
import { backlog } from './scenarios/backlog';
import { ceiling, finishRatios } from './scenarios/ceiling';
import { claim } from './scenarios/claim';
import { isolation } from './scenarios/isolation';
import { latency } from './scenarios/latency';
import { ordered } from './scenarios/ordered';
import { rateLimit } from './scenarios/ratelimit';
import { manyStores } from './scenarios/many-stores';
import { noisyNeighbour } from './scenarios/noisy-neighbour';
import { retention } from './scenarios/retention';
import { retry } from './scenarios/retry';
import { publishFiltered } from './scenarios/publish-filtered';
import { storage } from './scenarios/storage';
import { throughput } from './scenarios/throughput';

function parseOptions(argv: string[]): Options {
  const options: Options = {
    quick: false,
    clients: false,
    only: new Set(SCENARIOS),
    profile: false,
    sqlStats: false,
    logLevel: 'info',
    workers: [],
    workersShare: false,
    contenders: [],
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
      case '--workers':
        options.workers = (value ?? '').split(',').filter(Boolean).map(Number);
        if (options.workers.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--workers takes whole numbers ≥ 1, e.g. 1,2,4');
        break;
      case '--workers-share':
        options.workersShare = true;
        break;
      case '--contenders':
        options.contenders = (value ?? '').split(',').filter(Boolean);
        break;
      case '--deliveries':
        options.peersDeliveries = Number(value);
        break;
      case '--claim-finished':
        options.claimFinished = Number(value);
        if (!Number.isInteger(options.claimFinished) || options.claimFinished < 0) throw new Error('--claim-finished takes a whole number');
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

/** Runs one scenario if selected; a failure is recorded and the next scenario still runs. */
async function attempt(bench: Bench, scenario: Scenario, run: () => Promise<void>): Promise<void> {
  if (!bench.has(scenario) || bench.aborted) return;
  try {
    await run();
  } catch (error) {
    const message = String((error as Error)?.stack ?? error);
    bench.errors[scenario] = message;
    bench.row(scenario, 'FAILED', message.split('\n')[0].replace(/\|/g, '/').slice(0, 160), 'completes', false);
    console.error(`scenario ${scenario} failed: ${message}`);
    if (bench.hookline && !bench.hookline.child.running) {
      bench.hookline = undefined;
      if (
        [
          'api',
          'throughput',
          'publish-filtered',
          'latency',
          'isolation',
          'retry',
          'ratelimit',
          'ordered',
          'noisy-neighbour',
          'backlog',
          'retention',
        ].some((s) => bench.has(s as Scenario))
      )
        await bench.startHookline('restarted');
    }
  }
}

async function runAll(bench: Bench): Promise<void> {
  await bench.prepare();
  await bench.prepareDatabase();
  await attempt(bench, 'ceiling', () => ceiling(bench));
  await attempt(bench, 'ceiling', () => ceiling(bench, 'ceiling-dispatch'));
  // The peers, many-stores and storage scenarios start their own processes.
  const needsHookline = SCENARIOS.filter((s) => !['ceiling', 'claim', 'peers', 'many-stores', 'storage'].includes(s)).some((s) =>
    bench.has(s),
  );
  if (needsHookline) {
    const hookline = await bench.startHookline('main');
    await sleep(500);
    bench.results.idleRssMb = round(processMemoryMb(hookline.child.pid)?.rssMb ?? Number.NaN, 1);
    // Ten endpoints in the store's list for GET /webhooks, subscribed to a type never published here.
    await bench.createWebhooks(
      'customer.updated',
      bench.ports.map((_, i) => bench.url(i, `/ok/unused/${i}`)),
    );
  }
  await attempt(bench, 'api', () => managementApi(bench));
  await attempt(bench, 'throughput', () => throughput(bench));
  await attempt(bench, 'publish-filtered', () => publishFiltered(bench));
  await attempt(bench, 'latency', () => latency(bench));
  await attempt(bench, 'isolation', () => isolation(bench));
  await attempt(bench, 'retry', () => retry(bench));
  await attempt(bench, 'ratelimit', () => rateLimit(bench));
  await attempt(bench, 'ordered', () => ordered(bench));
  await attempt(bench, 'noisy-neighbour', () => noisyNeighbour(bench));
  await attempt(bench, 'backlog', () => backlog(bench));
  await attempt(bench, 'retention', () => retention(bench));
  // Starts and stops processes of its own.
  await attempt(bench, 'many-stores', () => manyStores(bench));
  await bench.stopHookline();
  // Starts its own processes on a database of its own.
  await attempt(bench, 'storage', () => storage(bench));
  await attempt(bench, 'peers', () => peers(bench));
  await attempt(bench, 'claim', () => claim(bench));
  finishRatios(bench);
}

async function runClients(bench: Bench): Promise<ClientComparison> {
  await bench.prepare();
  bench.log(`HTTP clients: ${bench.sizes.clientsMs} ms per run, ${bench.sizes.clientsRounds} round(s)`);
  return compareHttpClients(
    bench.registry,
    bench.ports,
    { warmupMs: bench.sizes.clientsWarmupMs, durationMs: bench.sizes.clientsMs, rounds: bench.sizes.clientsRounds },
    (line) => bench.log(line),
  );
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
      const comparison = await runClients(bench);
      const out = join(ROOT, 'bench', 'studies', 'results-http-clients.json');
      writeFileSync(out, `${JSON.stringify({ quick: options.quick, machine, comparison }, null, 2)}\n`);
      console.log(`\nnpm run bench -- --clients${options.quick ? ' --quick' : ''}\n`);
      console.log(formatComparison(comparison));
      console.log(`\nwritten to ${out}`);
      return;
    }
    await bench.dropStaleDatabases();
    await runAll(bench);
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
