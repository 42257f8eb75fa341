/** Closed-loop HTTP load on one URL with autocannon (scenario 7): requests/s and latency. */
import autocannon from 'autocannon';
import { childArgs, runMain } from './lib/child';

export interface ApiLoadArgs {
  url: string;
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
}

export interface ApiLoadResult {
  perSec: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  cpuMs: number;
}

async function main(): Promise<ApiLoadResult> {
  const args = childArgs<ApiLoadArgs>();
  const result = await autocannon({
    url: args.url,
    headers: args.headers,
    connections: args.connections,
    duration: args.durationSec,
  });
  // The whole process, start-up included (for the per-phase accounting).
  const cpu = process.cpuUsage();
  return {
    perSec: Math.round(result['2xx'] / args.durationSec),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  };
}

runMain(main);
