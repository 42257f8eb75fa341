import { round } from './stats';

export interface CpuSnapshot {
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

/**
 * CPU seconds by process between two snapshots; `own` is the orchestrator's use since `start`.
 * Whatever the machine was busy with beyond the processes named is "other" (a neighbour's load).
 */
export function cpuUseBetween(start: CpuSnapshot, end: CpuSnapshot, own: NodeJS.CpuUsage, loadGeneratorCpuS: number): CpuUse {
  const byKind = { hookline: 0, receiver: 0, postgres: 0, autovacuum: 0 };
  for (const [pid, { cpu, kind }] of end.pids) byKind[kind] += cpu - (start.pids.get(pid)?.cpu ?? 0);
  const orchestratorCpuS = (own.user + own.system) / 1e6;
  const busy = end.machine.busy - start.machine.busy;
  const total = end.machine.total - start.machine.total;
  return {
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
}

/** The CPU use of two windows of one phase as one: seconds added, the machine's busy share weighted by time. */
export function addCpuUse(a: CpuUse, b: CpuUse): CpuUse {
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

export function formatCpu(cpu: Record<string, CpuUse>): string {
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
