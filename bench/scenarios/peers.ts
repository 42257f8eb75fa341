import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import type { EventType } from '../../src/catalogue/event-catalogue';
import type { PeerArrivals } from '../peer-receiver';
import type { PeerDrain, PeerKind, PeerQueueArgs } from '../peer-queue';
import { deployedNodeFlags, hooklineNodeFlags, type Bench } from '../lib/bench';
import { Child, sleep } from '../lib/children';
import { DELIVERY_TIMEOUT_MS, ENDPOINT_CONCURRENCY, ENDPOINTS, REDIS, STORE } from '../lib/config';
import { BENCH_APPLICATION_NAME, bulkPublish, releaseDeliveries } from '../lib/db';
import { machineCpuSeconds, processCpuSeconds, processMemoryMb, RssSampler } from '../lib/proc';
import { round } from '../lib/stats';

type Name = 'ceiling' | 'pg-boss' | 'BullMQ' | 'Hookline';

interface Setting {
  name: Name;
  label: string;
  kind: PeerKind | 'hookline';
  concurrency: number;
  batchSize?: number;
  loops?: number;
  /** Hookline: ROLE=worker processes. */
  workers?: number;
}

/** One drain: rates, and CPU ms per delivery of each process (or group of processes). */
export interface PeerRun {
  label: string;
  perSec: number;
  spanMs: number;
  arrived: number;
  duplicates: number;
  lost: number;
  badSignatures: number;
  completedInStore: number;
  elapsedS: number;
  machineBusyPct: number;
  /** The machine's CPU used by processes outside this drain (other benchmarks, tests), in % of all cores. */
  otherBusyPct: number;
  /** The 1-minute load average at the end (2 cores). */
  load1: number;
  cpuMsPerDelivery: { worker: number; postgres: number; redis: number; receiver: number; postgresCluster: number };
  workerPeakRssMb: number;
  redisPeakRssMb?: number;
}

const TYPE: EventType = 'order.completed';

const SETTINGS_FULL: Setting[] = [
  { name: 'ceiling', label: 'ceiling, 512 in flight', kind: 'ceiling', concurrency: 512 },
  { name: 'pg-boss', label: 'pg-boss, 4 loops × batch 100', kind: 'pg-boss', concurrency: 400, batchSize: 100, loops: 4 },
  { name: 'pg-boss', label: 'pg-boss, 8 loops × batch 50', kind: 'pg-boss', concurrency: 400, batchSize: 50, loops: 8 },
  { name: 'pg-boss', label: 'pg-boss, 4 loops × batch 200', kind: 'pg-boss', concurrency: 800, batchSize: 200, loops: 4 },
  { name: 'BullMQ', label: 'BullMQ, concurrency 100', kind: 'bullmq', concurrency: 100 },
  { name: 'BullMQ', label: 'BullMQ, concurrency 150', kind: 'bullmq', concurrency: 150 },
  { name: 'BullMQ', label: 'BullMQ, concurrency 200', kind: 'bullmq', concurrency: 200 },
  { name: 'Hookline', label: 'Hookline, DISPATCH_CONCURRENCY=128', kind: 'hookline', concurrency: 128, workers: 1 },
  { name: 'Hookline', label: 'Hookline, DISPATCH_CONCURRENCY=256', kind: 'hookline', concurrency: 256, workers: 1 },
  { name: 'Hookline', label: 'Hookline, DISPATCH_CONCURRENCY=512', kind: 'hookline', concurrency: 512, workers: 1 },
  { name: 'pg-boss', label: 'pg-boss, 4 loops × batch 500', kind: 'pg-boss', concurrency: 2000, batchSize: 500, loops: 4 },
];

const SETTINGS_QUICK: Setting[] = [
  { name: 'ceiling', label: 'ceiling, 512 in flight', kind: 'ceiling', concurrency: 512 },
  { name: 'pg-boss', label: 'pg-boss, 4 loops × batch 100', kind: 'pg-boss', concurrency: 400, batchSize: 100, loops: 4 },
  { name: 'BullMQ', label: 'BullMQ, concurrency 200', kind: 'bullmq', concurrency: 200 },
  { name: 'Hookline', label: 'Hookline, DISPATCH_CONCURRENCY=512', kind: 'hookline', concurrency: 512, workers: 1 },
];

/** The pid of a running process by its command name (redis-server), from /proc. */
function pidOf(command: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === command) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** Every `postgres` process of the machine (the whole cluster, every database) with its CPU seconds. */
function clusterCpu(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') cpu.set(Number(entry), processCpuSeconds(Number(entry)));
    } catch {
      // gone meanwhile
    }
  }
  return cpu;
}

interface Snapshot {
  at: number;
  workers: Map<number, number>;
  receiver: number;
  redis: number;
  /** The benchmark database's backends (but the orchestrator's) and the cluster's shared processes (WAL writer, checkpointer…). */
  postgres: Map<number, number>;
  cluster: Map<number, number>;
  machine: { busy: number; total: number };
}

async function snapshot(bench: Bench, workerPids: number[], receiverPid: number, redisPid: number | undefined): Promise<Snapshot> {
  const { rows } = await bench.db!.pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE (datname = current_database() AND application_name <> $1) OR datname IS NULL`,
    [BENCH_APPLICATION_NAME],
  );
  return {
    at: Date.now(),
    workers: new Map(workerPids.map((pid) => [pid, processCpuSeconds(pid)])),
    receiver: processCpuSeconds(receiverPid),
    redis: redisPid === undefined ? 0 : processCpuSeconds(redisPid),
    postgres: new Map(rows.map(({ pid }) => [pid, processCpuSeconds(pid)])),
    cluster: clusterCpu(),
    machine: machineCpuSeconds(),
  };
}

/** CPU seconds of a group between two snapshots; a process that appeared meanwhile counts from 0. */
function delta(start: Map<number, number>, end: Map<number, number>): number {
  let sum = 0;
  for (const [pid, cpu] of end) sum += cpu - (start.get(pid) ?? 0);
  return sum;
}

export async function peers(bench: Bench): Promise<void> {
  const s = bench.sizes;
  const total = bench.options.peersDeliveries ?? s.peersDeliveries;
  const settings = s.peersSweep ? SETTINGS_FULL : SETTINGS_QUICK;
  bench.log(`peers: ${total} signed deliveries to ${ENDPOINTS} endpoints through Hookline and job queues, same sender, same receiver`);
  const receiver = bench.registry.start('peer-receiver', { endpoints: ENDPOINTS });
  const ports = (await receiver.ready()).ports as number[];
  const urls = ports.map((port, i) => `http://127.0.0.1:${port}/peers/${i}`);

  // Real endpoints with real secrets, created through the API; the queues sign with the same secrets.
  await bench.startHookline('peers-setup');
  const created: Array<{ id: string; secret: string }> = [];
  for (const [i, url] of urls.entries())
    created.push(await bench.api('POST', '/webhooks', { name: `bench peers ${i}`, url, events: [TYPE] }));
  await bench.stopHookline();
  const secrets = created.map((c) => c.secret);
  await receiver.call('secrets', secrets);
  const redisPid = pidOf('redis-server');
  const redisUp = redisPid !== undefined;
  if (!redisUp) bench.log('  ! no redis-server process: BullMQ is left out');

  const runs = new Map<string, PeerRun[]>();
  let runNo = 0;
  const runOnce = async (setting: Setting): Promise<PeerRun> => {
    runNo++;
    await receiver.call('clear');
    const queue = `peers_${runNo}`;
    const workers: Child[] = [];
    let succeededBefore = 0;
    if (setting.kind === 'hookline') {
      succeededBefore = await succeeded(bench);
      await bulkPublish(bench.db!.pool, {
        storeId: STORE,
        type: TYPE,
        webhookIds: created.map((c) => c.id),
        events: Math.ceil(total / ENDPOINTS),
        batchEvents: 2000,
        notify: false,
        dueInSeconds: 3600,
      });
      await bench.db!.pool.query('VACUUM ANALYZE delivery_queue');
      for (let w = 0; w < (setting.workers ?? 1); w++) {
        workers.push(
          bench.registry.start(
            'hookline-server',
            {},
            {
              // One store's deliveries, as the queues' jobs are: the store may hold every slot, as
              // a deployment serving one store would set it (docs/scaling.md, "Fair dispatch").
              env: {
                ...bench.hooklineEnv(),
                ROLE: 'worker',
                DISPATCH_CONCURRENCY: String(setting.concurrency),
                STORE_CONCURRENCY: String(setting.concurrency),
              },
              execArgv: hooklineNodeFlags(),
            },
          ),
        );
      }
      for (const worker of workers) await worker.ready(90_000);
    } else {
      const args: PeerQueueArgs = {
        kind: setting.kind,
        mode: 'enqueue',
        type: TYPE,
        urls,
        secrets,
        deliveries: total,
        queue,
        concurrency: setting.concurrency,
        batchSize: setting.batchSize,
        loops: setting.loops,
        databaseUrl: bench.db!.url,
        redis: REDIS,
        connectionsPerOrigin: ENDPOINT_CONCURRENCY,
        timeoutMs: DELIVERY_TIMEOUT_MS,
      };
      if (setting.kind !== 'ceiling') await bench.registry.run('peer-queue', args);
      // The Node flags of a deployed Hookline, like for like (the benchmark's helpers run without the memory reducer).
      workers.push(bench.registry.start('peer-queue', { ...args, mode: 'work' }, { execArgv: deployedNodeFlags() }));
      await workers[0].ready(60_000);
    }
    const pids = workers.map((w) => w.pid);
    const samplers = [...pids, ...(redisPid === undefined ? [] : [redisPid])].map((pid) => new RssSampler(pid));
    for (const sampler of samplers) sampler.start(100);
    await sleep(300);
    const start = await snapshot(bench, pids, receiver.pid, redisPid);
    let drain: PeerDrain | undefined;
    if (setting.kind === 'hookline') await releaseDeliveries(bench.db!.pool, TYPE);
    else drain = await workers[0].call<PeerDrain>('drain');
    const arrived = await waitForArrivals(receiver, total, 10_000);
    let completedInStore = 0;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
      completedInStore =
        setting.kind === 'hookline' ? (await succeeded(bench)) - succeededBefore : await workers[0].call<number>('completed');
      if (completedInStore >= total) break;
    }
    const end = await snapshot(bench, pids, receiver.pid, redisPid);
    for (const sampler of samplers) sampler.stop();
    const workerPeakRssMb = Math.max(...pids.map((pid, i) => Math.max(processMemoryMb(pid)?.peakRssMb ?? 0, samplers[i].peakMb)));
    if (setting.kind !== 'hookline') await workers[0].call('stop').catch(() => undefined);
    for (const worker of workers) await worker.stop(30_000);
    const spanMs = arrived.last - arrived.first;
    const perMs = (seconds: number): number => round((seconds * 1000) / total, 3);
    const machineTotal = end.machine.total - start.machine.total;
    const ours =
      delta(start.workers, end.workers) + delta(start.cluster, end.cluster) + (end.redis - start.redis) + (end.receiver - start.receiver);
    const run: PeerRun = {
      label: setting.label,
      perSec: Math.round(arrived.unique / (spanMs / 1000)),
      spanMs: Math.round(spanMs),
      arrived: arrived.unique,
      duplicates: arrived.duplicates,
      lost: total - arrived.unique,
      badSignatures: arrived.badSignatures,
      completedInStore,
      elapsedS: round((end.at - start.at) / 1000, 2),
      machineBusyPct: round(((end.machine.busy - start.machine.busy) / machineTotal) * 100, 1),
      otherBusyPct: round(((end.machine.busy - start.machine.busy - ours) / machineTotal) * 100, 1),
      load1: round(os.loadavg()[0], 1),
      cpuMsPerDelivery: {
        worker: perMs(delta(start.workers, end.workers)),
        postgres: perMs(delta(start.postgres, end.postgres)),
        redis: setting.kind === 'bullmq' ? perMs(end.redis - start.redis) : 0,
        receiver: perMs(end.receiver - start.receiver),
        postgresCluster: perMs(delta(start.cluster, end.cluster)),
      },
      workerPeakRssMb: round(workerPeakRssMb, 1),
      redisPeakRssMb: redisPid === undefined ? undefined : round(samplers[samplers.length - 1].peakMb, 1),
    };
    bench.log(
      `  ${setting.label}: ${run.perSec}/s over ${run.spanMs} ms; ${run.arrived} arrived, ${run.duplicates} duplicates, ${run.lost} lost, ${run.badSignatures} bad signatures, ${completedInStore} completed in the store${drain ? ` (worker: ${drain.ok} ok, ${drain.failed} failed)` : ''}; CPU ms/delivery ${JSON.stringify(run.cpuMsPerDelivery)}, machine ${run.machineBusyPct} % busy (${run.otherBusyPct} % by other processes), load ${run.load1}`,
    );
    runs.set(setting.label, [...(runs.get(setting.label) ?? []), run]);
    return run;
  };

  const chosen = bench.options.contenders;
  const available = settings.filter(
    (setting) => (setting.kind !== 'bullmq' || redisUp) && (chosen.length === 0 || chosen.includes(setting.kind)),
  );
  // The sweep: every setting once, then the best of each contender again (in rotation, so that a
  // machine drifting over the minutes weighs on all alike); the median of the best's runs counts.
  for (const setting of available) await runOnce(setting);
  const names: Name[] = ['ceiling', 'pg-boss', 'BullMQ', 'Hookline'];
  const best = new Map<Name, Setting>();
  for (const name of names) {
    const candidates = available.filter((setting) => setting.name === name);
    if (candidates.length === 0) continue;
    best.set(
      name,
      candidates.reduce((a, b) => (runs.get(b.label)![0].perSec > runs.get(a.label)![0].perSec ? b : a)),
    );
  }
  for (let round_ = 1; round_ < s.peersRuns; round_++) for (const setting of best.values()) await runOnce(setting);

  const medianRun = (label: string): PeerRun => {
    const list = [...runs.get(label)!].sort((a, b) => a.perSec - b.perSec);
    return list[Math.floor((list.length - 1) / 2)];
  };
  const results = new Map<Name, PeerRun>();
  for (const [name, setting] of best) results.set(name, medianRun(setting.label));
  const ceilingPerSec = results.get('ceiling')?.perSec;
  const peerNames = (['pg-boss', 'BullMQ'] as Name[]).filter((name) => results.has(name));
  const bestPeer = peerNames.reduce<Name | undefined>(
    (a, b) => (a === undefined || results.get(b)!.perSec > results.get(a)!.perSec ? b : a),
    undefined,
  );
  const bestPeerPerSec = bestPeer ? results.get(bestPeer)!.perSec : undefined;

  // Worker processes on one PostgreSQL: Hookline's best setting with 1, 2, 4… ROLE=worker processes.
  const scaling: Array<{ workers: number; run: PeerRun }> = [];
  const hooklineBest = best.get('Hookline');
  const hookline = results.get('Hookline');
  if (hooklineBest)
    for (const workers of bench.options.workers) {
      if (workers === 1 && hookline) {
        scaling.push({ workers, run: hookline });
        continue;
      }
      const concurrency = bench.options.workersShare
        ? Math.max(1, Math.round(hooklineBest.concurrency / workers))
        : hooklineBest.concurrency;
      const setting: Setting = {
        ...hooklineBest,
        concurrency,
        workers,
        label: `Hookline × ${workers} workers, DISPATCH_CONCURRENCY=${concurrency} each`,
      };
      for (let r = 0; r < s.peersRuns; r++) await runOnce(setting);
      scaling.push({ workers, run: medianRun(setting.label) });
    }

  Object.assign(bench.results, {
    peerBestPerSec: bestPeerPerSec,
    peerBestName: bestPeer,
    workerCpuMsPerDelivery: hookline?.cpuMsPerDelivery.worker,
    postgresCpuMsPerDelivery: hookline?.cpuMsPerDelivery.postgres,
    peers: {
      deliveries: total,
      endpoints: ENDPOINTS,
      best: Object.fromEntries([...best].map(([name, setting]) => [name, setting.label])),
      results: Object.fromEntries(results),
      runs: Object.fromEntries(runs),
      workers: scaling,
    },
  });
  const table = [
    '| contender (best setting) | deliveries/s | ratio to ceiling | ratio to best peer | CPU ms/delivery: worker / PostgreSQL / Redis / receiver | peak RSS of the worker | duplicates / lost |',
    '|---|---:|---:|---:|---|---:|---|',
  ];
  for (const [name, run] of results) {
    const c = run.cpuMsPerDelivery;
    const ratio = (base: number | undefined): string => (base ? String(round(run.perSec / base, 2)) : '–');
    bench.row(
      'peers',
      `${run.label}: deliveries/s (${total}), ratio to ceiling / best peer; CPU ms per delivery worker / PostgreSQL / Redis / receiver; peak RSS; duplicates / lost`,
      `${run.perSec}; ${ratio(ceilingPerSec)} / ${name === 'ceiling' ? '–' : ratio(bestPeerPerSec)}; ${c.worker} / ${c.postgres} / ${c.redis} / ${c.receiver}; ${run.workerPeakRssMb} MB; ${run.duplicates} / ${run.lost}`,
    );
    table.push(
      `| ${run.label} | ${run.perSec} | ${ratio(ceilingPerSec)} | ${name === 'ceiling' ? '–' : ratio(bestPeerPerSec)} | ${c.worker} / ${c.postgres} / ${c.redis} / ${c.receiver} | ${run.workerPeakRssMb} MB | ${run.duplicates} / ${run.lost} |`,
    );
  }
  for (const { workers, run } of scaling) {
    const c = run.cpuMsPerDelivery;
    bench.row(
      'peers',
      `Hookline with ${workers} ROLE=worker process(es): deliveries/s; CPU ms per delivery workers / PostgreSQL; machine busy (by other processes)`,
      `${run.perSec}; ${c.worker} / ${c.postgres}; ${run.machineBusyPct} % (${run.otherBusyPct} %)`,
    );
  }
  console.log(`\nPeers, ${total} deliveries (median of ${s.peersRuns} run(s) of each contender's best setting):\n\n${table.join('\n')}\n`);
  await receiver.stop(5_000);
}

async function succeeded(bench: Bench): Promise<number> {
  const { rows } = await bench.db!.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM deliveries WHERE event_type = $1 AND status = 'succeeded'`,
    [TYPE],
  );
  return rows[0].n;
}

/** Polls the receiver until `expected` distinct deliveries arrived or nothing new came for `stallMs`. */
async function waitForArrivals(receiver: Child, expected: number, stallMs: number): Promise<PeerArrivals> {
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const summary = await receiver.call<PeerArrivals>('summary');
    if (summary.unique >= expected) return summary;
    if (summary.count + summary.badSignatures !== last) {
      last = summary.count + summary.badSignatures;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallMs) return summary;
    await sleep(100);
  }
}
