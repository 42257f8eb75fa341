import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { pino } from 'pino';
import { requestLogging } from './logging.module';

interface Line {
  level: number;
  msg: string;
  req: { id: string; method: string; url: string };
  res: { statusCode: number };
  responseTime: number;
}

/** A real HTTP server whose every request goes through requestLogging, then a handler by path. */
describe('requestLogging', () => {
  const lines: Line[] = [];
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Line);
        done();
      },
    });
    const middleware = requestLogging(pino({ level: 'info' }, sink));
    server = createServer((req, res) => {
      Object.assign(req, { id: req.headers['x-request-id'] });
      middleware(
        req as Request,
        res as Response,
        (() => {
          const status = Number(/\/status\/(\d+)/.exec(req.url ?? '')?.[1] ?? 200);
          if (req.url?.startsWith('/hang')) return; // never answers: the client gives up
          res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
        }) as NextFunction,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function call(path: string, id: string, abortAfterMs?: number): Promise<void> {
    return new Promise((resolve) => {
      const req = request({ port, host: '127.0.0.1', path, headers: { 'x-request-id': id } }, (res) => res.resume().on('end', resolve));
      req.on('error', () => resolve());
      if (abortAfterMs !== undefined) setTimeout(() => req.destroy(), abortAfterMs);
      req.end();
    });
  }

  async function lineOf(id: string): Promise<Line | undefined> {
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      const line = lines.find((l) => l.req.id === id);
      if (line) return line;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return undefined;
  }

  it.each<[string, number, string, number]>([
    ['/api/v1/external/webhooks?limit=5', 30, 'request completed', 200],
    ['/api/v1/external/status/404', 40, 'request completed', 404],
    ['/api/v1/external/status/503', 50, 'request errored', 503],
  ])('logs %s once it is answered: level %i, "%s", its status', async (path, level, msg, statusCode) => {
    const id = `id-${statusCode}`;
    await call(path, id);
    const line = await lineOf(id);
    expect(line).toMatchObject({ level, msg, req: { id, method: 'GET', url: path }, res: { statusCode } });
    expect(line!.responseTime).toBeGreaterThanOrEqual(0);
    expect(lines.filter((l) => l.req.id === id)).toHaveLength(1);
  });

  it('redacts query values the API does not take', async () => {
    await call('/api/v1/external/webhooks?api_key=hlk_secret&limit=5', 'id-query');
    expect((await lineOf('id-query'))?.req.url).toBe('/api/v1/external/webhooks?api_key=[redacted]&limit=5');
  });

  it('logs a request whose client went away before the answer as aborted', async () => {
    await call('/hang', 'id-hang', 50);
    expect(await lineOf('id-hang')).toMatchObject({ level: 40, msg: 'request aborted' });
  });

  it('does not log the probes', async () => {
    await call('/health', 'id-health');
    await call('/metrics', 'id-metrics');
    await call('/api/v1/external/webhooks', 'id-after-probes');
    await lineOf('id-after-probes');
    expect(lines.filter((l) => l.req.id === 'id-health' || l.req.id === 'id-metrics')).toEqual([]);
  });
});

describe('requestLogging at LOG_LEVEL=debug', () => {
  it('adds a "request received" line as a request arrives, and logs the probes at debug', async () => {
    const lines: Array<Record<string, unknown> & { msg: string; level: number }> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
        done();
      },
    });
    const middleware = requestLogging(pino({ level: 'debug' }, sink));
    const server = createServer((req, res) => {
      Object.assign(req, { id: req.headers['x-request-id'] });
      middleware(req as Request, res as Response, (() => res.writeHead(201).end('{}')) as NextFunction);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      for (const [path, id] of [
        ['/api/v1/external/webhooks?api_key=hlk_x', 'api'],
        ['/health', 'probe'],
      ]) {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers: { 'x-request-id': id, 'content-type': 'application/json' },
          body: '{}',
        });
        await res.arrayBuffer();
      }
      const deadline = Date.now() + 2_000;
      while (lines.length < 3 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(lines.map(({ level, msg, req }) => ({ level, msg, req }))).toEqual([
      {
        level: 20,
        msg: 'request received',
        req: {
          id: 'api',
          method: 'POST',
          url: '/api/v1/external/webhooks?api_key=[redacted]',
          contentType: 'application/json',
          contentLength: '2',
          remoteAddress: '127.0.0.1',
        },
      },
      { level: 30, msg: 'request completed', req: { id: 'api', method: 'POST', url: '/api/v1/external/webhooks?api_key=[redacted]' } },
      { level: 20, msg: 'request completed', req: { id: 'probe', method: 'POST', url: '/health' } },
    ]);
  });
});
