/**
 * The benchmark's webhook receiver: plain node:http on 127.0.0.1, one listening port per endpoint
 * (each endpoint is its own origin, as separate customers' servers are). What it answers depends on
 * the path's first segment:
 *
 *   /ok/...    200 {"received":true}, as soon as the body is read
 *   /ok1ms/... the same 1 ms later, like a receiver that does a little work first
 *   /fail/...  500
 *   /hang/...  nothing, ever (until `release`), like a server that accepted the connection and died
 *
 * Every request's arrival (wall-clock ms with sub-ms resolution, taken when its headers arrive),
 * endpoint, path and X-Webhook-ID are recorded; the orchestrator reads them over IPC.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { childArgs, exitWithParent, listenPerEndpoint, send, serveRpc } from './lib/child';
import { wallMs } from './lib/protocol';

interface ReceiverArgs {
  endpoints: number;
}

export interface Arrivals {
  ep: number[];
  at: number[];
  id: string[];
  path: string[];
}

export interface ArrivalSummary {
  count: number;
  unique: number;
  first: number;
  last: number;
}

const OK_BODY = '{"received":true}';
const OK_HEADERS = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(OK_BODY)) };
const FAIL_BODY = '{"error":"failing on purpose"}';
const FAIL_HEADERS = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(FAIL_BODY)) };

let records: Arrivals = { ep: [], at: [], id: [], path: [] };
/** Running summaries per prefix, so that polling costs only the records that came since the last poll. */
let summaries = new Map<string, { scanned: number; keys: Set<string>; summary: ArrivalSummary }>();
const hanging = new Set<ServerResponse>();

function handler(endpoint: number) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const at = wallMs();
    const path = req.url ?? '/';
    const id = req.headers['x-webhook-id'];
    records.ep.push(endpoint);
    records.at.push(at);
    records.id.push(typeof id === 'string' ? id : '');
    records.path.push(path);
    if (path.startsWith('/hang/')) {
      req.resume();
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    const fail = path.startsWith('/fail/');
    req.resume();
    const answer = (): void => {
      res.writeHead(fail ? 500 : 200, fail ? FAIL_HEADERS : OK_HEADERS);
      res.end(fail ? FAIL_BODY : OK_BODY);
    };
    const delayed = path.startsWith('/ok1ms/');
    req.on('end', () => (delayed ? setTimeout(answer, 1) : answer()));
  };
}

function select(prefix: string): number[] {
  const indexes: number[] = [];
  for (let i = 0; i < records.path.length; i++) if (records.path[i].startsWith(prefix)) indexes.push(i);
  return indexes;
}

async function main(): Promise<void> {
  const { endpoints } = childArgs<ReceiverArgs>();
  const { servers, ports } = await listenPerEndpoint(endpoints, handler);
  exitWithParent(() => process.exit(0));
  process.on('SIGTERM', () => {
    for (const res of hanging) res.destroy();
    for (const server of servers) server.closeAllConnections();
    process.exit(0);
  });
  serveRpc({
    summary: (params) => {
      const prefix = (params as { prefix: string }).prefix;
      let state = summaries.get(prefix);
      if (!state) {
        state = {
          scanned: 0,
          keys: new Set(),
          summary: { count: 0, unique: 0, first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY },
        };
        summaries.set(prefix, state);
      }
      const { summary, keys } = state;
      for (let i = state.scanned; i < records.path.length; i++) {
        if (!records.path[i].startsWith(prefix)) continue;
        summary.count++;
        keys.add(`${records.ep[i]}|${records.path[i]}|${records.id[i]}`);
        summary.first = Math.min(summary.first, records.at[i]);
        summary.last = Math.max(summary.last, records.at[i]);
      }
      state.scanned = records.path.length;
      summary.unique = keys.size;
      return summary;
    },
    arrivals: (params) => {
      const indexes = select((params as { prefix: string }).prefix);
      const out: Arrivals = { ep: [], at: [], id: [], path: [] };
      for (const i of indexes) {
        out.ep.push(records.ep[i]);
        out.at.push(records.at[i]);
        out.id.push(records.id[i]);
        out.path.push(records.path[i]);
      }
      return out;
    },
    clear: () => {
      records = { ep: [], at: [], id: [], path: [] };
      summaries = new Map();
      return true;
    },
    release: () => {
      const count = hanging.size;
      for (const res of hanging) res.destroy();
      hanging.clear();
      return count;
    },
  });
  await send({ type: 'ready', ports, pid: process.pid });
}

void main();
