/**
 * The HTTP-client comparison, "axios with a keep-alive agent or undici?": the same signed POSTs
 * (bench/load-http.ts) sent to the same receiver by each client, at the same concurrency and the
 * same number of sockets per origin, one client at a time in its own process, in rotating order.
 * Requests/s and the client process's CPU time per request (user + system) are reported; the
 * median of the rounds is kept. Run with `npm run bench -- --clients` (no database needed); the
 * findings are in docs/decisions.md (Studies).
 */
import type { ChildRegistry } from '../lib/children';
import type { ClientName, LoadHttpArgs, LoadHttpResult } from '../load-http';
import { median } from '../lib/stats';

export interface ClientShape {
  name: string;
  origins: number;
  concurrency: number;
  connectionsPerOrigin: number;
}

export const CLIENT_SHAPES: ClientShape[] = [
  { name: '10 endpoints, 512 in flight, 64 sockets each (Hookline defaults)', origins: 10, concurrency: 512, connectionsPerOrigin: 64 },
  { name: '1 endpoint, 64 in flight, 64 sockets', origins: 1, concurrency: 64, connectionsPerOrigin: 64 },
];

export const CLIENTS: ClientName[] = ['undici', 'undici-dispatch', 'undici-signal', 'axios'];

export interface ClientFigures {
  perSec: number;
  cpuUsPerRequest: number;
  latencyMeanMs: number;
  failures: number;
  rounds: number[];
}

export type ClientComparison = Array<{ shape: ClientShape; clients: Record<string, ClientFigures> }>;

export async function compareHttpClients(
  registry: ChildRegistry,
  ports: number[],
  timing: { warmupMs: number; durationMs: number; rounds: number },
  log: (line: string) => void,
): Promise<ClientComparison> {
  const comparison: ClientComparison = [];
  for (const shape of CLIENT_SHAPES) {
    const runs = new Map<ClientName, LoadHttpResult[]>(CLIENTS.map((client) => [client, []]));
    for (let round = 0; round < timing.rounds; round++) {
      const order = CLIENTS.map((_, i) => CLIENTS[(i + round) % CLIENTS.length]);
      for (const client of order) {
        const args: LoadHttpArgs = {
          client,
          urls: ports.slice(0, shape.origins).map((port, i) => `http://127.0.0.1:${port}/ok/clients/${i}`),
          concurrency: shape.concurrency,
          connectionsPerOrigin: shape.connectionsPerOrigin,
          warmupMs: timing.warmupMs,
          durationMs: timing.durationMs,
          timeoutMs: 10_000,
        };
        const result = await registry.run<LoadHttpResult>('load-http', args);
        runs.get(client)!.push(result);
        log(
          `  ${shape.origins} origin(s), ${client}: ${result.perSec} req/s, ${result.cpuUsPerRequest} µs CPU/request, failures ${result.failures}`,
        );
      }
    }
    const clients: Record<string, ClientFigures> = {};
    for (const [client, results] of runs) {
      clients[client] = {
        perSec: Math.round(median(results.map((r) => r.perSec))),
        cpuUsPerRequest: Math.round(median(results.map((r) => r.cpuUsPerRequest))),
        latencyMeanMs: median(results.map((r) => r.latencyMeanMs)),
        failures: results.reduce((sum, r) => sum + r.failures, 0),
        rounds: results.map((r) => r.perSec),
      };
    }
    comparison.push({ shape, clients });
  }
  return comparison;
}

export function formatComparison(comparison: ClientComparison): string {
  const lines = ['| shape | client | requests/s | CPU µs/request | mean latency ms | failures |', '|---|---|---:|---:|---:|---:|'];
  for (const { shape, clients } of comparison) {
    for (const [client, figures] of Object.entries(clients)) {
      lines.push(
        `| ${shape.name} | ${client} | ${figures.perSec} | ${figures.cpuUsPerRequest} | ${figures.latencyMeanMs} | ${figures.failures} |`,
      );
    }
  }
  return lines.join('\n');
}
