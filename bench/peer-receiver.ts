/**
 * The peers scenario's receiver: as little work per request as a real receiver can do. One port
 * per endpoint on 127.0.0.1; each request's X-Webhook-Signature is checked against its endpoint's
 * secret (401 when wrong), its X-Webhook-ID counted once per endpoint (a second one is a
 * duplicate), and the first and last arrival kept. Nothing is stored per request beyond the id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { signPayload } from '../src/dispatch/sending/signature';
import { childArgs, exitWithParent, listenPerEndpoint, send, serveRpc } from './lib/child';
import { wallMs } from './lib/protocol';

interface PeerReceiverArgs {
  endpoints: number;
}

export interface PeerArrivals {
  /** Requests with a valid signature. */
  count: number;
  /** Distinct (endpoint, X-Webhook-ID) pairs among them. */
  unique: number;
  duplicates: number;
  badSignatures: number;
  first: number;
  last: number;
}

const OK_BODY = '{"received":true}';
const OK_HEADERS = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(OK_BODY)) };
const BAD_HEADERS = { 'content-length': '0' };

let secrets: string[] = [];
let seen: Array<Set<string>> = [];
let state: PeerArrivals = fresh();

function fresh(): PeerArrivals {
  return { count: 0, unique: 0, duplicates: 0, badSignatures: 0, first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY };
}

function handler(endpoint: number) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const at = wallMs();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const id = req.headers['x-webhook-id'];
      const timestamp = req.headers['x-webhook-timestamp'];
      const signature = req.headers['x-webhook-signature'];
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      if (typeof id !== 'string' || typeof timestamp !== 'string' || signature !== signPayload(secrets[endpoint] ?? '', timestamp, body)) {
        state.badSignatures++;
        res.writeHead(401, BAD_HEADERS);
        res.end();
        return;
      }
      state.count++;
      const ids = seen[endpoint];
      if (ids.has(id)) state.duplicates++;
      else ids.add(id);
      if (at < state.first) state.first = at;
      if (at > state.last) state.last = at;
      res.writeHead(200, OK_HEADERS);
      res.end(OK_BODY);
    });
  };
}

async function main(): Promise<void> {
  const { endpoints } = childArgs<PeerReceiverArgs>();
  const { servers, ports } = await listenPerEndpoint(endpoints, handler);
  seen = ports.map(() => new Set());
  exitWithParent(() => process.exit(0));
  process.on('SIGTERM', () => {
    for (const server of servers) server.closeAllConnections();
    process.exit(0);
  });
  serveRpc({
    secrets: (params) => {
      secrets = params as string[];
      return true;
    },
    summary: () => ({ ...state, unique: seen.reduce((sum, ids) => sum + ids.size, 0) }),
    clear: () => {
      state = fresh();
      seen = ports.map(() => new Set());
      return true;
    },
  });
  await send({ type: 'ready', ports, pid: process.pid });
}

void main();
