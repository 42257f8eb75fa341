import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type Responder = (request: ReceivedRequest, res: ServerResponse) => unknown;

/**
 * A real HTTP receiver on 127.0.0.1 that records every request. What it answers is set per test
 * (`respondWith`); by default 200 `{"received":true}`, as the example receiver does.
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  private responder: Responder = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"received":true}');
  };
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    const hub: { handle?: (request: ReceivedRequest, res: ServerResponse) => void } = {};
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        hub.handle?.(
          { at: Date.now(), method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) },
          res,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = new Receiver(server, `http://127.0.0.1:${port}`);
    hub.handle = (request, res) => receiver.handle(request, res);
    return receiver;
  }

  private handle(request: ReceivedRequest, res: ServerResponse): void {
    this.requests.push(request);
    for (const wake of this.waiters.splice(0)) wake();
    void Promise.resolve(this.responder(request, res)).catch(() => res.destroy());
  }

  respondWith(responder: Responder): void {
    this.responder = responder;
  }

  /** Answers every request with `status` (and an optional body). */
  respondStatus(status: number, body = ''): void {
    this.respondWith((_req, res) => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(body);
    });
  }

  /** Requests to `path` (all when omitted). */
  to(path?: string): ReceivedRequest[] {
    return path === undefined ? this.requests : this.requests.filter((request) => request.path === path);
  }

  /** Waits until `count` requests matched `filter`, or fails at the deadline. */
  async waitFor(
    count: number,
    filter: (request: ReceivedRequest) => boolean = () => true,
    deadlineMs = 10_000,
  ): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const matched = this.requests.filter(filter);
      if (matched.length >= count) return matched;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver saw ${matched.length} of ${count} expected requests within ${deadlineMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
