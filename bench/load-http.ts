/**
 * Signed webhook POSTs straight at the receiver, with no database: the ceiling of scenario 1 and
 * the HTTP-client study (bench/studies/http-clients.ts). Every request is what Hookline sends: a
 * stored envelope, X-Webhook-* headers and the signature from src/dispatch/sending/signature.ts computed
 * per request. `concurrency` requests are kept in flight, spread round-robin over `urls`, with at
 * most `connectionsPerOrigin` sockets per endpoint (Hookline's ENDPOINT_CONCURRENCY).
 *
 * Clients:
 *   undici         undici.request + Agent, time limits on the Agent (headers/body timeouts): the ceiling
 *   undici-signal  the same plus a per-request AbortSignal.timeout (the alternative to src/dispatch/sending/attempt-deadlines.ts)
 *   undici-dispatch the same Agent through its lower-level `dispatch` with a handler that collects the
 *                  answer (no response stream, no async iterator)
 *   axios          axios.post with an http.Agent({ keepAlive: true, maxSockets }), timeout option, no redirects
 */
import { Agent as HttpAgent } from 'node:http';
import axios from 'axios';
import { Agent, request } from 'undici';
import { signPayload } from '../src/dispatch/sending/signature';
import { EVENT_CATALOGUE } from '../src/catalogue/event-catalogue';
import { buildEnvelope } from '../src/catalogue/envelope';
import { childArgs, runMain } from './lib/child';

export type ClientName = 'undici' | 'undici-signal' | 'undici-dispatch' | 'axios';

export interface LoadHttpArgs {
  client: ClientName;
  urls: string[];
  concurrency: number;
  connectionsPerOrigin: number;
  warmupMs: number;
  durationMs: number;
  timeoutMs: number;
}

export interface LoadHttpResult {
  client: ClientName;
  requests: number;
  failures: number;
  perSec: number;
  cpuUsPerRequest: number;
  cpuPct: number;
  latencyMeanMs: number;
  durationMs: number;
  /** CPU of the whole process, start-up included (for the per-phase accounting). */
  totalCpuMs: number;
}

type Sender = (url: string, headers: Record<string, string>, body: string) => Promise<number>;

function makeSender(args: LoadHttpArgs): Sender {
  const timeout = args.timeoutMs;
  if (args.client === 'axios') {
    const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: args.connectionsPerOrigin });
    const client = axios.create({ httpAgent, timeout, maxRedirects: 0, validateStatus: () => true });
    return async (url, headers, body) => (await client.post(url, body, { headers })).status;
  }
  const agent = new Agent({
    connections: args.connectionsPerOrigin,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    headersTimeout: timeout,
    bodyTimeout: timeout,
    connect: { timeout },
  });
  if (args.client === 'undici-dispatch') {
    // Parsed once, as the sender's TargetCache does.
    const targets = new Map(args.urls.map((url) => [url, new URL(url)]));
    return (url, headers, body) => {
      const { origin, pathname } = targets.get(url)!;
      return new Promise<number>((resolve, reject) => {
        let status = 0;
        agent.dispatch(
          { origin, path: pathname, method: 'POST', headers, body },
          {
            onRequestStart: () => undefined,
            onResponseStart: (_controller, statusCode) => void (status = statusCode),
            onResponseData: () => undefined,
            onResponseEnd: () => resolve(status),
            onResponseError: (_controller, error) => reject(error),
          },
        );
      });
    };
  }
  const withSignal = args.client === 'undici-signal';
  return async (url, headers, body) => {
    const response = await request(url, {
      dispatcher: agent,
      method: 'POST',
      headers,
      body,
      signal: withSignal ? AbortSignal.timeout(timeout) : undefined,
    });
    // Read the answer as the sender does (its excerpt), so the socket is reused.
    for await (const chunk of response.body) void chunk;
    return response.statusCode;
  };
}

async function main(): Promise<LoadHttpResult> {
  const args = childArgs<LoadHttpArgs>();
  const send = makeSender(args);
  const secret = `whsec_${Buffer.alloc(32, 3).toString('base64url')}`;
  const userAgent = 'Hookline-Webhook/1.0 (+http://localhost:3000/docs)';
  const example = EVENT_CATALOGUE['order.created'].example;
  const envelopes = Array.from({ length: 256 }, (_, i) => buildEnvelope('order.created', { ...example, total: example.total + i }));

  const started = performance.now();
  const measureFrom = started + args.warmupMs;
  const measureTo = measureFrom + args.durationMs;
  let next = 0;
  let counted = 0;
  let failures = 0;
  let latencySum = 0;
  // CPU of this process over the measured window: taken by the first request to finish after each edge.
  let cpuAtStart: NodeJS.CpuUsage | undefined;
  let cpuAtEnd: NodeJS.CpuUsage | undefined;

  const worker = async (): Promise<void> => {
    while (performance.now() < measureTo) {
      const i = next++;
      const { envelope, body } = envelopes[i % envelopes.length];
      const timestamp = String(Date.now());
      const headers = {
        'content-type': 'application/json',
        'user-agent': userAgent,
        'x-webhook-id': envelope.id,
        'x-webhook-timestamp': timestamp,
        'x-webhook-signature': signPayload(secret, timestamp, body),
      };
      const sentAt = performance.now();
      let status = 0;
      try {
        status = await send(args.urls[i % args.urls.length], headers, body);
      } catch {
        status = 0;
      }
      const doneAt = performance.now();
      if (doneAt >= measureFrom) cpuAtStart ??= process.cpuUsage();
      if (doneAt >= measureTo) cpuAtEnd ??= process.cpuUsage();
      if (doneAt >= measureFrom && doneAt < measureTo) {
        if (status >= 200 && status < 300) {
          counted++;
          latencySum += doneAt - sentAt;
        } else failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, () => worker()));
  const total = (usage: NodeJS.CpuUsage | undefined): number => (usage ? usage.user + usage.system : Number.NaN);
  const cpuUs = total(cpuAtEnd) - total(cpuAtStart);
  return {
    client: args.client,
    requests: counted,
    failures,
    perSec: Math.round(counted / (args.durationMs / 1000)),
    cpuUsPerRequest: counted ? Math.round(cpuUs / counted) : Number.NaN,
    cpuPct: Math.round((cpuUs / 1000 / args.durationMs) * 100),
    latencyMeanMs: counted ? Math.round((latencySum / counted) * 100) / 100 : Number.NaN,
    durationMs: args.durationMs,
    totalCpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
  };
}

runMain(main);
