import { createServer as createHttpServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { URL_RESOLVER, type ResolvedAddress, type Resolver } from '../src/webhooks/url-policy';
import { startApp, type TestApp } from './support/app';
import { createAuthority } from './support/certificates';
import { freePort } from './support/child-app';
import { eventually } from './support/eventually';
import { createWebhook, deliveriesOf, orderData } from './support/fixtures';

/**
 * EGRESS_PROXY_URL (docs/operations.md#egress-proxy): deliveries, retries, test deliveries and
 * OAuth2 token requests leave through the proxy, as CONNECT tunnels to the address Hookline
 * resolved and checked; a refused address never reaches the proxy; a proxy that cannot be reached
 * fails the attempt with a clear error.
 */

interface Carried {
  kind: 'CONNECT' | 'absolute-form';
  /** The request target: `127.0.0.1:4000` for CONNECT, the absolute URL otherwise. */
  target: string;
  headers: IncomingHttpHeaders;
  /** The local port of the proxy's connection onward (what the far end sees as the client's port). */
  upstreamPort?: number;
}

const isLoopback = (host: string): boolean => host === '127.0.0.1' || host === '::1' || host === '[::1]';

/**
 * A forward proxy that logs what it carried: CONNECT tunnels and absolute-form requests. It only
 * ever connects onward to loopback addresses; anything else is answered 403 (as is everything
 * while `refuseAll`), so no test traffic leaves the machine.
 */
class ForwardProxy {
  readonly carried: Carried[] = [];
  refuseAll = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ForwardProxy> {
    const server = createHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new ForwardProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('connection', (socket: Socket) => {
      proxy.sockets.add(socket);
      socket.once('close', () => proxy.sockets.delete(socket));
    });
    server.on('connect', (req, client: Socket, head: Buffer) => proxy.tunnel(req.url ?? '', req.headers, client, head));
    server.on('request', (req, res) => {
      const target = new URL(req.url ?? '');
      const entry: Carried = { kind: 'absolute-form', target: target.href, headers: req.headers };
      proxy.carried.push(entry);
      if (proxy.refuseAll || !isLoopback(target.hostname)) {
        res.writeHead(403).end();
        return;
      }
      const onward = httpRequest(
        { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      onward.once('socket', (socket) => socket.once('connect', () => (entry.upstreamPort = socket.localPort)));
      onward.on('error', () => res.destroy());
      req.pipe(onward);
    });
    return proxy;
  }

  private tunnel(target: string, headers: IncomingHttpHeaders, client: Socket, head: Buffer): void {
    const entry: Carried = { kind: 'CONNECT', target, headers };
    this.carried.push(entry);
    const colon = target.lastIndexOf(':');
    const host = target.slice(0, colon);
    if (this.refuseAll || !isLoopback(host)) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = netConnect({ host: host.replace(/^\[(.*)\]$/, '$1'), port: Number(target.slice(colon + 1)) }, () => {
      entry.upstreamPort = upstream.localPort;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.sockets.add(upstream);
    upstream.once('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  }

  /** The ports its onward connections came from. */
  get upstreamPorts(): Set<number | undefined> {
    return new Set(this.carried.map((entry) => entry.upstreamPort));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface Arrival {
  path: string;
  host?: string;
  authorization?: string;
  remotePort?: number;
  servername?: string | false | null;
}

/** A receiver that notes, for each request, the Host header and the port it came from; answers `answer(n)`. */
async function startReceiver(answer: (n: number) => number = () => 200) {
  const arrivals: Arrival[] = [];
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push({
        path: req.url ?? '',
        host: req.headers.host,
        authorization: req.headers.authorization,
        remotePort: req.socket.remotePort,
      });
      res.writeHead(answer(arrivals.length)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    arrivals,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Names the specs resolve themselves; every other name is unknown. */
function resolverOf(names: Record<string, string>): Resolver {
  return (hostname) => {
    const address = names[hostname];
    if (address === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    return Promise.resolve<ResolvedAddress[]>([{ address, family: address.includes(':') ? 6 : 4 }]);
  };
}

async function testDelivery(t: TestApp, webhookId: string): Promise<{ success: boolean; error: string | null; statusCode: number | null }> {
  const res = await t.api(`/webhooks/${webhookId}/test`, { method: 'POST' });
  expect(res.status).toBe(200);
  return (await res.json()) as { success: boolean; error: string | null; statusCode: number | null };
}

describe('deliveries through the egress proxy', () => {
  let proxy: ForwardProxy;
  let t: TestApp;
  const names: Record<string, string> = {
    'receiver.hookline.test': '127.0.0.1',
    'tokens.hookline.test': '127.0.0.1',
    localhost: '127.0.0.1',
  };

  beforeAll(async () => {
    proxy = await ForwardProxy.start();
    t = await startApp({
      env: { EGRESS_PROXY_URL: proxy.url },
      config: { retryScheduleMs: [0, 200], retryJitter: 0 },
      overrides: [{ provide: URL_RESOLVER, useValue: resolverOf(names) }],
    });
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  it('carries each delivery, its retry and a test delivery, tunnelled to the address Hookline checked', async () => {
    const receiver = await startReceiver((n) => (n === 1 ? 500 : 200));
    try {
      const webhook = await createWebhook(t, `http://receiver.hookline.test:${receiver.port}/in`);
      await t.api('/events', { method: 'POST', json: { type: 'order.created', data: orderData(1) } });
      await eventually(
        async () => receiver.arrivals.length,
        (n) => n === 2,
        { what: 'the failed attempt and its retry' },
      );
      expect((await testDelivery(t, webhook.id)).success).toBe(true);

      expect(receiver.arrivals).toHaveLength(3);
      // Every request came in on one of the proxy's onward connections, named as the URL names its host.
      for (const arrival of receiver.arrivals) {
        expect(proxy.upstreamPorts.has(arrival.remotePort)).toBe(true);
        expect(arrival.host).toBe(`receiver.hookline.test:${receiver.port}`);
      }
      const tunnels = proxy.carried.filter((entry) => entry.target === `127.0.0.1:${receiver.port}`);
      expect(tunnels.length).toBeGreaterThanOrEqual(1);
      expect(tunnels.every((entry) => entry.kind === 'CONNECT')).toBe(true);
      expect(proxy.carried.some((entry) => entry.target.includes('receiver.hookline.test'))).toBe(false);
      // The outcome is written with the next batch, a few milliseconds after the answer arrived.
      const delivery = await eventually(
        async () => (await deliveriesOf(t, webhook.id, '?eventType=order.created'))[0],
        (found) => found !== undefined && found.status !== 'pending',
        { what: 'the outcome of the retried delivery' },
      );
      expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 2 });
    } finally {
      await receiver.close();
    }
  });

  it('runs TLS end to end inside the tunnel, with the URL’s host name for SNI and the certificate check', async () => {
    const authority = await createAuthority('Receiver CA');
    const [server, client] = await Promise.all([
      authority.issue({ commonName: 'localhost', use: 'server' }),
      authority.issue({ commonName: 'hookline', use: 'client' }),
    ]);
    const arrivals: Arrival[] = [];
    const https = createHttpsServer({ cert: server.certificate, key: server.key }, (req, res) => {
      arrivals.push({ path: req.url ?? '', host: req.headers.host, servername: (req.socket as TLSSocket).servername });
      req.resume();
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    const port = (https.address() as AddressInfo).port;
    try {
      const webhook = await createWebhook(t, `https://localhost:${port}/tls`, ['order.created'], {
        tls: { clientCertificate: client.certificate, clientKey: client.key, ca: authority.certificate },
      });
      const answer = await testDelivery(t, webhook.id);
      expect(answer).toMatchObject({ success: true, statusCode: 200 });
      expect(arrivals).toEqual([{ path: '/tls', host: `localhost:${port}`, servername: 'localhost' }]);
      expect(proxy.carried.some((entry) => entry.kind === 'CONNECT' && entry.target === `127.0.0.1:${port}`)).toBe(true);
      await t.api(`/webhooks/${webhook.id}`, { method: 'DELETE' });
    } finally {
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
    }
  });

  it('sends OAuth2 token requests through it too', async () => {
    const tokenRequests: Array<{ remotePort?: number }> = [];
    const tokens = createHttpServer((req, res) => {
      tokenRequests.push({ remotePort: req.socket.remotePort });
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'tok-through-proxy', token_type: 'Bearer', expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => tokens.listen(0, '127.0.0.1', resolve));
    const tokenPort = (tokens.address() as AddressInfo).port;
    const receiver = await startReceiver();
    try {
      const webhook = await createWebhook(t, `http://receiver.hookline.test:${receiver.port}/oauth`, ['order.created'], {
        auth: {
          type: 'oauth2',
          tokenUrl: `http://tokens.hookline.test:${tokenPort}/token`,
          clientId: 'hookline',
          clientSecret: 'cs_proxy_1',
        },
      });
      expect((await testDelivery(t, webhook.id)).success).toBe(true);
      expect(receiver.arrivals.map((a) => a.authorization)).toEqual(['Bearer tok-through-proxy']);
      expect(tokenRequests).toHaveLength(1);
      expect(proxy.upstreamPorts.has(tokenRequests[0].remotePort)).toBe(true);
      expect(proxy.carried.some((entry) => entry.kind === 'CONNECT' && entry.target === `127.0.0.1:${tokenPort}`)).toBe(true);
      await t.api(`/webhooks/${webhook.id}`, { method: 'DELETE' });
    } finally {
      await receiver.close();
      tokens.closeAllConnections();
      await new Promise<void>((resolve) => tokens.close(() => resolve()));
    }
  });
});

describe('the URL policy in front of the egress proxy', () => {
  let proxy: ForwardProxy;
  let t: TestApp;
  // A name that was public when registered and points inward later (DNS rebinding).
  const names: Record<string, string> = { 'rebind.hookline.test': '93.184.215.14' };

  beforeAll(async () => {
    proxy = await ForwardProxy.start();
    t = await startApp({
      env: { EGRESS_PROXY_URL: proxy.url, ALLOW_PRIVATE_NETWORKS: 'false' },
      overrides: [{ provide: URL_RESOLVER, useValue: resolverOf(names) }],
    });
  });

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  it('asks the proxy for the checked address only, and refuses a name resolving inward without reaching the proxy', async () => {
    const webhook = await createWebhook(t, 'http://rebind.hookline.test/hook');
    // Public: the proxy is asked for the address (this test proxy refuses anything not on loopback).
    expect(await testDelivery(t, webhook.id)).toMatchObject({
      success: false,
      statusCode: null,
      error: 'egress proxy refused CONNECT 93.184.215.14:80 (for rebind.hookline.test): 403 Forbidden',
    });
    expect(proxy.carried.map((entry) => [entry.kind, entry.target])).toEqual([['CONNECT', '93.184.215.14:80']]);

    names['rebind.hookline.test'] = '10.0.0.7';
    expect(await testDelivery(t, webhook.id)).toMatchObject({
      success: false,
      error: 'blocked: refusing to connect to rebind.hookline.test: it resolves to a private address (10.0.0.7)',
    });
    await t.api('/events', { method: 'POST', json: { type: 'order.created', data: orderData(2) } });
    const [failed] = await eventually(
      () => deliveriesOf(t, webhook.id, '?eventType=order.created'),
      (rows) => rows.length === 1 && rows[0].lastError !== null,
      { what: 'the published delivery’s first attempt' },
    );
    expect(failed.lastError).toBe('blocked: refusing to connect to rebind.hookline.test: it resolves to a private address (10.0.0.7)');
    expect(proxy.carried).toHaveLength(1);
  });
});

describe('an egress proxy that cannot be reached', () => {
  it('fails the attempt, saying so, and retries it as any failed attempt', async () => {
    const deadPort = await freePort();
    const receiver = await startReceiver();
    const t = await startApp({ env: { EGRESS_PROXY_URL: `http://user:pw@127.0.0.1:${deadPort}` } });
    try {
      const webhook = await createWebhook(t, `http://127.0.0.1:${receiver.port}/never`);
      const unreachable = `egress proxy unreachable: ECONNREFUSED connect ECONNREFUSED 127.0.0.1:${deadPort} (http://127.0.0.1:${deadPort})`;
      expect(await testDelivery(t, webhook.id)).toEqual(expect.objectContaining({ success: false, statusCode: null, error: unreachable }));
      await t.api('/events', { method: 'POST', json: { type: 'order.created', data: orderData(3) } });
      const [pending] = await eventually(
        () => deliveriesOf(t, webhook.id, '?eventType=order.created'),
        (rows) => rows.length === 1 && rows[0].lastError !== null,
        { what: 'the first attempt' },
      );
      expect(pending).toMatchObject({ status: 'pending', lastError: unreachable, lastStatusCode: null });
      expect(receiver.arrivals).toEqual([]);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});
