import { createServer as createHttpServer, IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { AddressInfo, createServer as createTcpServer, Server as TcpServer, Socket } from 'node:net';
import { RESPONSE_EXCERPT_BYTES } from '../src/dispatch/sending/webhook-sender';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createWebhook, delivery, deliveriesOf, DeliveryView, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * Receivers that misbehave on purpose, each a real server on 127.0.0.1: every
 * such answer is one failed (or, for a 2xx, cut short) attempt with a clear error, the sender
 * never reads more than 4 KiB, memory stays bounded, and a healthy endpoint keeps getting its
 * deliveries at once meanwhile. One attempt per delivery (RETRY_SCHEDULE_MS=0) and a 2 s time
 * limit keep the file short.
 */
const TIMEOUT_MS = 2_000;
const FIFTY_MB = 50 * 1024 * 1024;

/** A server that counts connections and requests and keeps every socket, to close them all. */
interface Hostile {
  url: string;
  connections: number;
  requests: number;
  /** Bytes the server handed to the kernel for its answers (what a big body really cost). */
  bytesWritten: number;
  close(): Promise<void>;
}

function track(server: HttpServer | TcpServer, stats: { connections: number; bytesWritten: number }): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    stats.connections++;
    sockets.add(socket);
    socket.on('close', () => {
      stats.bytesWritten += socket.bytesWritten;
      sockets.delete(socket);
    });
  });
  return sockets;
}

async function listen(server: HttpServer | TcpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** An HTTP server whose every answer is `handler`'s; the request body is read first. */
async function hostileHttp(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Hostile> {
  const stats = { connections: 0, requests: 0, bytesWritten: 0 };
  const server = createHttpServer((req, res) => {
    stats.requests++;
    req.resume();
    req.on('end', () => handler(req, res));
  });
  const sockets = track(server, stats);
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return stats.connections;
    },
    get requests() {
      return stats.requests;
    },
    get bytesWritten() {
      return stats.bytesWritten + [...sockets].reduce((sum, socket) => sum + socket.bytesWritten, 0);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A raw TCP server: `onRequest` gets the socket once the first bytes of a request arrived. */
async function hostileTcp(onRequest: (socket: Socket) => void): Promise<Hostile> {
  const stats = { connections: 0, requests: 0, bytesWritten: 0 };
  const server = createTcpServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => {
      stats.requests++;
      onRequest(socket);
    });
  });
  const sockets = track(server, stats);
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return stats.connections;
    },
    get requests() {
      return stats.requests;
    },
    get bytesWritten() {
      return stats.bytesWritten;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes `total` bytes of 'x' in 64 KiB chunks, honouring backpressure, until done or cut off. */
function streamBody(res: ServerResponse, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const pump = (): void => {
    while (sent < total && !res.destroyed) {
      const piece = total - sent >= chunk.length ? chunk : chunk.subarray(0, total - sent);
      sent += piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  pump();
}

/** Writes `text` one byte a second (or until the connection is gone). */
function trickle(write: (byte: string) => boolean, text: string, isGone: () => boolean): void {
  let i = 0;
  const timer = setInterval(() => {
    if (isGone() || i >= text.length) {
      clearInterval(timer);
      return;
    }
    write(text[i++]);
  }, 1_000);
}

function rssMiB(): number {
  return Math.round((process.memoryUsage().rss / 1024 / 1024) * 10) / 10;
}

/** Samples this process's RSS every 10 ms until stopped; returns the peak. */
function rssPeak(): { stop(): number } {
  let peak = rssMiB();
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB())), 10);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMiB());
    },
  };
}

describe('hostile receivers', () => {
  let t: TestApp;
  let healthy: Receiver;
  const servers: Hostile[] = [];
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    t = await startApp({ env: { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS), RETRY_SCHEDULE_MS: '0' } });
    healthy = await Receiver.start();
    await createWebhook(t, `${healthy.url}/healthy`, ['order.updated']);
    // Warm up (JIT, connection pools, the receiver) so that the RSS figures measure the bodies.
    await publish(t, 'order.updated', orderData(0));
    await healthy.waitFor(1, (r) => r.path === '/healthy');
  });

  afterAll(async () => {
    console.log(`[hostile-receivers] figures ${JSON.stringify(figures)}`);
    await t?.close();
    await healthy?.close();
    await Promise.all(servers.map((server) => server.close()));
  });

  async function serve(server: Promise<Hostile>): Promise<Hostile> {
    const started = await server;
    servers.push(started);
    return started;
  }

  /**
   * Publishes one order.created to a fresh endpoint at `url` and, while that delivery is under
   * way, a burst of order.updated events to the healthy endpoint, which must all arrive within
   * 1.5 s of their publication. Returns the hostile delivery once final, with its attempts.
   */
  async function deliverTo(url: string, label: string): Promise<DeliveryView> {
    const hook = await createWebhook(t, url, ['order.created']);
    try {
      const event = await publish(t, 'order.created', orderData(1));
      expect(event.deliveries).toBe(1);

      const healthyBefore = healthy.to('/healthy').length;
      const published = new Map<string, number>();
      for (let i = 0; i < 5; i++) {
        const sent = Date.now();
        published.set((await publish(t, 'order.updated', orderData(100 + i))).id, sent);
      }
      const arrived = await healthy.waitFor(healthyBefore + 5, (r) => r.path === '/healthy', 5_000);
      const latencies = arrived
        .filter((r) => published.has(String(r.headers['x-webhook-id'])))
        .map((r) => r.at - published.get(String(r.headers['x-webhook-id']))!);
      expect(latencies).toHaveLength(5);
      figures[`${label}: healthy endpoint's worst latency meanwhile (ms)`] = Math.max(...latencies);
      expect(Math.max(...latencies)).toBeLessThan(1_500);

      const [row] = await eventually(
        () => deliveriesOf(t, hook.id),
        (rows) => rows.length === 1 && rows[0].status !== 'pending',
        { deadlineMs: TIMEOUT_MS + 8_000, what: `the ${label} delivery to be final` },
      );
      const detail = await delivery(t, row.id);
      expect(detail.attempts).toHaveLength(1);
      figures[`${label}: attempt`] = {
        status: detail.status,
        statusCode: detail.attempts![0].statusCode,
        error: detail.attempts![0].error,
        durationMs: detail.attempts![0].durationMs,
        excerptBytes: Buffer.byteLength(detail.attempts![0].responseBody ?? ''),
      };
      return detail;
    } finally {
      const res = await t.api(`/webhooks/${hook.id}`, { method: 'DELETE' });
      expect(res.status).toBe(204);
    }
  }

  it('cuts a 50 MB error body at 4 KiB: a failed attempt, no 50 MB transferred', async () => {
    const server = await serve(
      hostileHttp((_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain', 'content-length': String(FIFTY_MB) });
        streamBody(res, FIFTY_MB);
      }),
    );
    const detail = await deliverTo(`${server.url}/big-500`, '50 MB body, HTTP 500');
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: 500, lastError: 'HTTP 500' });
    const [attempt] = detail.attempts!;
    expect(attempt.responseBody).toBe('x'.repeat(RESPONSE_EXCERPT_BYTES));
    expect(attempt.durationMs).toBeLessThan(TIMEOUT_MS);
    // The connection is dropped after 4 KiB: what the server got rid of is the socket buffers'
    // worth (a few MiB on loopback), not 50 MB.
    expect(server.bytesWritten).toBeLessThan(16 * 1024 * 1024);
    figures['50 MB (500): bytes the receiver could write'] = server.bytesWritten;
  });

  it('keeps memory bounded under ten 50 MB answers at once (500 MB offered)', async () => {
    const server = await serve(
      hostileHttp((_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain', 'content-length': String(FIFTY_MB) });
        streamBody(res, FIFTY_MB);
      }),
    );
    const hook = await createWebhook(t, `${server.url}/big-many`, ['order.created']);
    try {
      const rssBefore = rssMiB();
      const sampler = rssPeak();
      const started = Date.now();
      await Promise.all(Array.from({ length: 10 }, (_, i) => publish(t, 'order.created', orderData(200 + i))));
      const rows = await eventually(
        () => deliveriesOf(t, hook.id),
        (list) => list.length === 10 && list.every((row) => row.status === 'failed'),
        { deadlineMs: 15_000, what: 'ten 50 MB deliveries to fail' },
      );
      const peak = sampler.stop();
      const rssAfter = rssMiB();
      Object.assign(figures, {
        '10 x 50 MB (500) at once: RSS before (MiB)': rssBefore,
        '10 x 50 MB (500) at once: RSS peak (MiB)': peak,
        '10 x 50 MB (500) at once: RSS after (MiB)': rssAfter,
        '10 x 50 MB (500) at once: bytes the receiver could write': server.bytesWritten,
        '10 x 50 MB (500) at once: wall time (ms)': Date.now() - started,
      });
      expect(rows.map((row) => row.lastError)).toEqual(Array(10).fill('HTTP 500'));
      expect(server.bytesWritten).toBeLessThan(10 * 16 * 1024 * 1024);
      // Reading the bodies whole would take 500 MB; what is allowed here is noise (this process
      // also runs the app, PostgreSQL's client and the receiver).
      expect(peak - rssBefore).toBeLessThan(64);
    } finally {
      await t.api(`/webhooks/${hook.id}`, { method: 'DELETE' });
    }
  });

  it('acknowledges a 2xx with a 50 MB body at once and keeps 4 KiB of it', async () => {
    const server = await serve(
      hostileHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(FIFTY_MB) });
        streamBody(res, FIFTY_MB);
      }),
    );
    const rssBefore = rssMiB();
    const sampler = rssPeak();
    const detail = await deliverTo(`${server.url}/big-200`, '50 MB body, HTTP 200');
    const peak = sampler.stop();
    Object.assign(figures, {
      '50 MB (200): RSS before (MiB)': rssBefore,
      '50 MB (200): RSS peak (MiB)': peak,
      '50 MB (200): RSS after (MiB)': rssMiB(),
      '50 MB (200): bytes the receiver could write': server.bytesWritten,
    });
    expect(detail).toMatchObject({ status: 'succeeded', lastStatusCode: 200, lastError: null });
    expect(detail.attempts![0].responseBody).toHaveLength(RESPONSE_EXCERPT_BYTES);
    expect(detail.attempts![0].durationMs).toBeLessThan(TIMEOUT_MS);
    expect(server.bytesWritten).toBeLessThan(16 * 1024 * 1024);
    expect(peak - rssBefore).toBeLessThan(40);
  });

  // (An unsolicited 100 Continue is another matter: undici drops the connection as a bad response.)
  it('delivers a 201 that follows an informational 103 Early Hints', async () => {
    const server = await serve(
      hostileHttp((_req, res) => {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' }, () => {
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end('{"received":true}');
        });
      }),
    );
    const detail = await deliverTo(`${server.url}/informational`, '103 before a 201');
    expect(detail).toMatchObject({ status: 'succeeded', lastStatusCode: 201, lastError: null });
    expect(detail.attempts![0]).toMatchObject({ statusCode: 201, error: null, responseBody: '{"received":true}' });
  });

  it('fails a 103 Early Hints followed by a reset as a reset before any answer: a 1xx is not the answer', async () => {
    const server = await serve(
      hostileHttp((_req, res) => {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' }, () => setTimeout(() => res.socket?.resetAndDestroy(), 20));
      }),
    );
    const detail = await deliverTo(`${server.url}/informational-reset`, '103, then a reset');
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: null });
    expect(detail.lastError).toMatch(/^connection reset/);
    expect(detail.attempts![0]).toMatchObject({ statusCode: null, responseBody: null });
  });

  it('fails an answer whose status line trickles in one byte a second, at the time limit', async () => {
    const server = await serve(
      hostileTcp((socket) =>
        trickle(
          (byte) => socket.write(byte),
          'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
          () => socket.destroyed,
        ),
      ),
    );
    const detail = await deliverTo(`${server.url}/trickle-head`, 'status line trickled');
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: null });
    expect(detail.lastError).toBe(`timeout: no complete answer within ${TIMEOUT_MS} ms`);
    expect(detail.attempts![0].durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(detail.attempts![0].durationMs).toBeLessThan(TIMEOUT_MS + 1_000);
  });

  it('fails a 200 whose body trickles in one byte a second and does not end within the time limit', async () => {
    const server = await serve(
      hostileHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '64' });
        trickle(
          (byte) => res.write(byte),
          'y'.repeat(64),
          () => res.destroyed,
        );
      }),
    );
    const detail = await deliverTo(`${server.url}/trickle-body`, 'body trickled after a 200');
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: 200 });
    expect(detail.lastError).toMatch(
      new RegExp(`^timeout: the response body did not end within ${TIMEOUT_MS} ms \\(HTTP 200, \\d bytes received\\)$`),
    );
    expect(detail.attempts![0].responseBody).toMatch(/^y{0,3}$|^$/);
    expect(detail.attempts![0].durationMs).toBeLessThan(TIMEOUT_MS + 1_000);
  });

  it('fails a 200 whose connection is reset in the middle of its body', async () => {
    const server = await serve(
      hostileHttp((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100000' });
        res.write('z'.repeat(1000), () => setTimeout(() => res.socket?.resetAndDestroy(), 20));
      }),
    );
    const detail = await deliverTo(`${server.url}/reset`, 'reset mid-body');
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: 200 });
    expect(detail.lastError).toMatch(/^connection reset while reading the response body \(HTTP 200, \d+ bytes received\)/);
    expect(detail.attempts![0].responseBody).toBe('z'.repeat(1000));
  });

  it('fails a connection reset before any answer', async () => {
    const server = await serve(hostileTcp((socket) => socket.resetAndDestroy()));
    const detail = await deliverTo(`${server.url}/reset-early`, 'reset before the answer');
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: null });
    expect(detail.lastError).toMatch(/^connection reset/);
  });

  it('fails a server that answers garbage instead of HTTP', async () => {
    const server = await serve(
      hostileTcp((socket) => {
        socket.end('SSH-2.0-OpenSSH_9.6\r\n\u0000\u0001\u0002 garbage\r\n\r\n');
      }),
    );
    const detail = await deliverTo(`${server.url}/garbage`, 'garbage instead of HTTP');
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: null });
    expect(detail.lastError).toMatch(/^invalid HTTP response \(Response does not match the HTTP\/1\.1 protocol/);
  });

  it('fails an https:// URL that points to a plain-HTTP port with a TLS error', async () => {
    const server = await serve(hostileHttp((_req, res) => res.writeHead(200).end('plain')));
    const detail = await deliverTo(`${server.url.replace('http:', 'https:')}/tls`, 'https:// to plain HTTP');
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: null });
    expect(detail.lastError).toMatch(/^TLS error \(/);
    expect(server.requests).toBe(0);
  });

  it.each([
    [301, '/internal'],
    [302, '/internal'],
    [307, '/internal'],
    [308, '/internal'],
  ])('records a %i to a private address as failed and never follows it', async (status, path) => {
    const internal = await serve(hostileHttp((_req, res) => res.writeHead(200).end('internal')));
    const metadata = 'http://169.254.169.254/latest/meta-data/';
    const server = await serve(
      hostileHttp((req, res) => {
        res.writeHead(status, { location: req.url === '/to-metadata' ? metadata : `${internal.url}${path}` }).end();
      }),
    );
    const detail = await deliverTo(`${server.url}/to-internal`, `${status} to a private address`);
    expect(detail).toMatchObject({ status: 'failed', lastStatusCode: status });
    expect(detail.lastError).toBe(`redirect ${status} not followed (Location: ${internal.url}${path})`);
    const toMetadata = await deliverTo(`${server.url}/to-metadata`, `${status} to the metadata address`);
    expect(toMetadata.lastError).toBe(`redirect ${status} not followed (Location: ${metadata})`);
    expect(internal.connections).toBe(0);
  });

  it('keeps the healthy endpoint served throughout: every one of its deliveries succeeded', async () => {
    const hooks = await t.api('/webhooks?event=order.updated');
    const [hook] = ((await hooks.json()) as { data: Array<{ id: string }> }).data;
    const rows = await eventually(
      () => deliveriesOf(t, hook.id, '?limit=200'),
      (list) => list.every((row) => row.status === 'succeeded'),
      { what: 'every healthy delivery to succeed' },
    );
    expect(rows.length).toBeGreaterThanOrEqual(5 * 16);
    figures['healthy endpoint deliveries, all succeeded'] = rows.length;
  });
});
