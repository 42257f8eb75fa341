/**
 * Publishes events through Hookline's API (POST /events) at a fixed rate, open loop: the n-th event
 * is sent at start + n/rate whatever happened to the earlier ones, so a slow server shows up as
 * latency, not as a lower rate. Records, per event, its id (from the 202), when the request was
 * sent and when the answer came back (wall clock, sub-ms, comparable with the receiver's).
 */
import { Pool } from 'undici';
import { childArgs, runMain } from './lib/child';
import { wallMs } from './lib/protocol';

export interface PublisherArgs {
  baseUrl: string;
  apiKey: string;
  type: string;
  data: unknown;
  ratePerSec: number;
  /** Events sent in the first `warmupMs` are marked `warm` (left out of the statistics). */
  warmupMs: number;
  durationMs: number;
  connections: number;
}

export interface PublisherResult {
  ids: string[];
  sentAt: number[];
  answeredAt: number[];
  status: number[];
  warm: boolean[];
  errors: number;
  achievedPerSec: number;
  cpuMs: number;
}

async function main(): Promise<PublisherResult> {
  const args = childArgs<PublisherArgs>();
  const origin = new URL(args.baseUrl).origin;
  const pool = new Pool(origin, { connections: args.connections, pipelining: 1 });
  const path = '/api/v1/external/events';
  const body = JSON.stringify({ type: args.type, data: args.data });
  const headers = { 'content-type': 'application/json', 'x-api-key': args.apiKey };
  const total = Math.round((args.ratePerSec * (args.warmupMs + args.durationMs)) / 1000);
  const warmCount = Math.round((args.ratePerSec * args.warmupMs) / 1000);
  const result: PublisherResult = { ids: [], sentAt: [], answeredAt: [], status: [], warm: [], errors: 0, achievedPerSec: 0, cpuMs: 0 };
  const inFlight: Array<Promise<void>> = [];

  const fire = (n: number): Promise<void> => {
    const sentAt = wallMs();
    return pool
      .request({ path, method: 'POST', headers, body })
      .then(async (response) => {
        const text = await response.body.text();
        const answeredAt = wallMs();
        let id = '';
        try {
          id = (JSON.parse(text) as { id?: string }).id ?? '';
        } catch {
          id = '';
        }
        if (response.statusCode !== 202 || !id) result.errors++;
        result.ids.push(id);
        result.sentAt.push(sentAt);
        result.answeredAt.push(answeredAt);
        result.status.push(response.statusCode);
        result.warm.push(n < warmCount);
      })
      .catch(() => {
        result.errors++;
      });
  };

  const started = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    // Wakes when the next event is due, not every millisecond: each wake-up of this process is CPU
    // taken from the processes being measured on two cores, and at 500/s half of them sent nothing.
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * args.ratePerSec) + 1);
      while (sent < due) inFlight.push(fire(sent++));
      if (sent >= total) resolve();
      else setTimeout(tick, Math.max(1, Math.ceil(started + (sent * 1000) / args.ratePerSec - performance.now())));
    };
    tick();
  });
  const sendingMs = performance.now() - started;
  await Promise.all(inFlight);
  await pool.close();
  // The whole process, start-up included (for the per-phase accounting).
  const cpu = process.cpuUsage();
  result.achievedPerSec = Math.round((total / sendingMs) * 1000);
  result.cpuMs = Math.round((cpu.user + cpu.system) / 1000);
  return result;
}

runMain(main);
