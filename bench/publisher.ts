/**
 * Publishes events through Hookline's API (POST /events) at a fixed rate, open loop: the n-th event
 * is sent at start + n/rate whatever happened to the earlier ones, so a slow server shows up as
 * latency, not as a lower rate. Records, per event, its id (from the 202), when the request was
 * sent and when the answer came back (wall clock, sub-ms, comparable with the receiver's).
 *
 * The requests go out over plain keep-alive sockets, written from one prepared buffer, and only the
 * status line, Content-Length and the body of each answer are read: this process shares two cores
 * with the ones it measures, and this way costs well under half the CPU a request of undici's Pool.
 */
import { connect, Socket } from 'node:net';
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

/** What a finished exchange hands back: the status (0 when the connection failed) and the body. */
type OnAnswer = (status: number, body: string) => void;

const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i;

/** Node's http server closes a keep-alive connection idle for 5 s; one idle this long is not reused. */
const IDLE_REUSE_MS = 4_000;

/**
 * Keep-alive HTTP/1.1 connections to one origin, one request at a time on each, the most recently
 * used first (at low rates one or two connections carry everything). Answers must carry
 * Content-Length, as every answer of Hookline's JSON API does; one without it fails the request.
 */
class Connections {
  private readonly idle: Array<{ socket: Socket; since: number }> = [];
  private readonly waiting: OnAnswer[] = [];
  /** The request each busy connection is carrying. */
  private readonly pending = new WeakMap<Socket, OnAnswer>();
  private open = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly max: number,
    private readonly request: Buffer,
  ) {}

  send(onAnswer: OnAnswer): void {
    let socket = this.takeIdle();
    if (!socket && this.open < this.max) socket = this.connect();
    if (socket) this.exchange(socket, onAnswer);
    else this.waiting.push(onAnswer);
  }

  close(): void {
    for (const { socket } of this.idle.splice(0)) socket.destroy();
  }

  /** The most recently used idle connection the server has not had time to close. */
  private takeIdle(): Socket | undefined {
    const now = performance.now();
    for (let entry = this.idle.pop(); entry; entry = this.idle.pop()) {
      if (now - entry.since < IDLE_REUSE_MS) return entry.socket;
      entry.socket.destroy();
    }
    return undefined;
  }

  private exchange(socket: Socket, onAnswer: OnAnswer): void {
    this.pending.set(socket, onAnswer);
    socket.write(this.request);
  }

  private connect(): Socket {
    const socket = connect(this.port, this.host);
    socket.setNoDelay(true);
    this.open++;
    let buffered: Buffer | undefined;
    const fail = (): void => {
      const onAnswer = this.pending.get(socket);
      this.pending.delete(socket);
      onAnswer?.(0, '');
    };
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered ? Buffer.concat([buffered, chunk]) : chunk;
      const headEnd = buffered.indexOf(HEAD_END);
      if (headEnd < 0) return;
      const head = buffered.toString('latin1', 0, headEnd);
      const length = CONTENT_LENGTH.exec(head);
      if (!length) {
        socket.destroy();
        return;
      }
      const bodyEnd = headEnd + HEAD_END.length + Number(length[1]);
      if (buffered.length < bodyEnd) return;
      const status = Number(head.slice(9, 12));
      const body = buffered.toString('utf8', headEnd + HEAD_END.length, bodyEnd);
      buffered = undefined;
      const onAnswer = this.pending.get(socket);
      this.pending.delete(socket);
      const next = this.waiting.shift();
      if (next) this.exchange(socket, next);
      else this.idle.push({ socket, since: performance.now() });
      onAnswer?.(status, body);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.open--;
      const at = this.idle.findIndex((entry) => entry.socket === socket);
      if (at >= 0) this.idle.splice(at, 1);
      fail();
      // A request queued behind a full set of connections gets the place this one left.
      const next = this.waiting.shift();
      if (next) this.send(next);
    });
    return socket;
  }
}

async function main(): Promise<PublisherResult> {
  const args = childArgs<PublisherArgs>();
  const url = new URL(args.baseUrl);
  const body = Buffer.from(JSON.stringify({ type: args.type, data: args.data }));
  const head =
    `POST /api/v1/external/events HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\n` +
    `x-api-key: ${args.apiKey}\r\ncontent-length: ${body.length}\r\n\r\n`;
  const connections = new Connections(url.hostname, Number(url.port), args.connections, Buffer.concat([Buffer.from(head), body]));
  const total = Math.round((args.ratePerSec * (args.warmupMs + args.durationMs)) / 1000);
  const warmCount = Math.round((args.ratePerSec * args.warmupMs) / 1000);
  const result: PublisherResult = { ids: [], sentAt: [], answeredAt: [], status: [], warm: [], errors: 0, achievedPerSec: 0, cpuMs: 0 };
  let answered = 0;
  let allAnswered!: () => void;
  const done = new Promise<void>((resolve) => (allAnswered = resolve));

  const fire = (n: number): void => {
    const sentAt = wallMs();
    connections.send((status, text) => {
      const answeredAt = wallMs();
      let id = '';
      try {
        id = (JSON.parse(text) as { id?: string }).id ?? '';
      } catch {
        id = '';
      }
      if (status === 0) result.errors++;
      else {
        if (status !== 202 || !id) result.errors++;
        result.ids.push(id);
        result.sentAt.push(sentAt);
        result.answeredAt.push(answeredAt);
        result.status.push(status);
        result.warm.push(n < warmCount);
      }
      if (++answered === total) allAnswered();
    });
  };

  const started = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    // Wakes when the next event is due, not every millisecond: each wake-up of this process is CPU
    // taken from the processes being measured on two cores, and at 500/s half of them sent nothing.
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * args.ratePerSec) + 1);
      while (sent < due) fire(sent++);
      if (sent >= total) resolve();
      else setTimeout(tick, Math.max(1, Math.ceil(started + (sent * 1000) / args.ratePerSec - performance.now())));
    };
    tick();
  });
  const sendingMs = performance.now() - started;
  await done;
  connections.close();
  // The whole process, start-up included (for the per-phase accounting).
  const cpu = process.cpuUsage();
  result.achievedPerSec = Math.round((total / sendingMs) * 1000);
  result.cpuMs = Math.round((cpu.user + cpu.system) / 1000);
  return result;
}

runMain(main);
