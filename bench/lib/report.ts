import os from 'node:os';
import { adminQuery } from './db';
import { round } from './stats';

/** One line of the results table; `pass` is set only where the row has a target. */
export interface Row {
  scenario: string;
  metric: string;
  value: string;
  target?: string;
  pass?: boolean;
}

export function formatTable(rows: Row[]): string {
  const lines = ['| scenario | metric | value | target | met |', '|---|---|---:|---|:---:|'];
  for (const row of rows) {
    lines.push(
      `| ${row.scenario} | ${row.metric} | ${row.value} | ${row.target ?? ''} | ${row.pass === undefined ? '' : row.pass ? 'yes' : '**no**'} |`,
    );
  }
  return lines.join('\n');
}

export function formatCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([outcome, count]) => `${outcome}: ${count}`)
    .join('; ');
}

export async function machineInfo(serverUrl: string | undefined): Promise<Record<string, unknown>> {
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
