import { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, Request, Response } from 'express';
import { HooklineExpressAdapter } from './express-adapter';

interface Seen {
  requestPrototype: boolean;
  responsePrototype: boolean;
  nodeRequest: boolean;
  nodeResponse: boolean;
}

/** Serves GET /echo with `adapter`, noting what Node's server hands Express, and answers one request. */
async function serveOnce(adapter: ExpressAdapter): Promise<{ seen: Seen; status: number; body: unknown; header: string | null }> {
  adapter.initHttpServer({});
  const app = adapter.getInstance<Express>();
  const server = adapter.getHttpServer() as Server;
  let seen: Seen | undefined;
  // Runs before Express's own listener: what Node built, before Express touches it.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    seen = {
      requestPrototype: Object.getPrototypeOf(req) === app.request,
      responsePrototype: Object.getPrototypeOf(res) === app.response,
      nodeRequest: req instanceof IncomingMessage,
      nodeResponse: res instanceof ServerResponse,
    };
  });
  app.get('/echo', (req: Request, res: Response) => {
    res
      .set('X-Echo', req.get('x-probe') ?? '')
      .status(201)
      .json({ path: req.path, query: req.query.q });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/echo?q=1`, { headers: { 'X-Probe': 'hello' } });
    return { seen: seen!, status: response.status, body: await response.json(), header: response.headers.get('x-echo') };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('HooklineExpressAdapter', () => {
  it("has Node's server build requests and responses with Express's prototypes", async () => {
    const { seen } = await serveOnce(new HooklineExpressAdapter());
    expect(seen).toEqual({ requestPrototype: true, responsePrototype: true, nodeRequest: true, nodeResponse: true });
  });

  it("serves Express's request and response methods as before", async () => {
    const answer = await serveOnce(new HooklineExpressAdapter());
    expect(answer).toMatchObject({ status: 201, body: { path: '/echo', query: '1' }, header: 'hello' });
  });

  it("differs from Nest's adapter, whose server leaves Express to change the prototypes", async () => {
    const { seen, status } = await serveOnce(new ExpressAdapter());
    expect(seen).toMatchObject({ requestPrototype: false, responsePrototype: false });
    expect(status).toBe(201);
  });
});
