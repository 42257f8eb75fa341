import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { LookupFunction } from 'node:net';
import type { EgressProxy } from '../../config/egress-proxy';
import { EgressProxyError, egressConnector, openTunnel } from './egress-connector';

/** A raw TCP "proxy" that records what it was sent and answers with `answer`. */
async function fakeProxy(
  answer: (request: string, socket: Socket) => void,
): Promise<{ proxy: EgressProxy; received: string[]; server: Server }> {
  const received: string[] = [];
  const server = createServer((socket) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) {
        received.push(text);
        answer(text, socket);
        text = '';
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { proxy: { origin: `http://127.0.0.1:${port}`, host: '127.0.0.1', port }, received, server };
}

function tunnel(proxy: EgressProxy, address = '203.0.113.7', timeoutMs = 2_000): Promise<Socket> {
  return new Promise((resolve, reject) =>
    openTunnel(proxy, address, 443, 'hooks.example.com', timeoutMs, (error, socket) => (error ? reject(error) : resolve(socket!))),
  );
}

describe('openTunnel', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  it('asks for the address with CONNECT, with the proxy’s credentials, and hands over bytes sent past the answer', async () => {
    const { proxy, received, server } = await fakeProxy((_request, socket) =>
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\nhello'),
    );
    servers.push(server);
    const socket = await tunnel({ ...proxy, authorization: 'Basic dTpw' });
    const first = await new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    socket.destroy();
    expect(received).toEqual(['CONNECT 203.0.113.7:443 HTTP/1.1\r\nHost: 203.0.113.7:443\r\nProxy-Authorization: Basic dTpw\r\n\r\n']);
    expect(first).toBe('hello');
  });

  it('brackets an IPv6 address', async () => {
    const { proxy, received, server } = await fakeProxy((_request, socket) => socket.write('HTTP/1.1 200 OK\r\n\r\n'));
    servers.push(server);
    (await tunnel(proxy, '2001:db8::7')).destroy();
    expect(received[0].split('\r\n')[0]).toBe('CONNECT [2001:db8::7]:443 HTTP/1.1');
  });

  it('fails with the proxy’s answer when it refuses the tunnel', async () => {
    const { proxy, server } = await fakeProxy((_request, socket) => socket.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n'));
    servers.push(server);
    await expect(tunnel(proxy)).rejects.toThrow(
      new EgressProxyError('egress proxy refused CONNECT 203.0.113.7:443 (for hooks.example.com): 407 Proxy Authentication Required'),
    );
  });

  it('says the proxy is unreachable when nothing listens, when it hangs up, or when it does not answer in time', async () => {
    const { proxy, server } = await fakeProxy((_request, socket) => socket.destroy());
    servers.push(server);
    await expect(tunnel(proxy)).rejects.toThrow(
      /^egress proxy unreachable: it closed the connection before answering CONNECT 203\.0\.113\.7:443/,
    );
    const silent = await fakeProxy(() => undefined);
    servers.push(silent.server);
    await expect(tunnel(silent.proxy, '203.0.113.7', 100)).rejects.toThrow(
      `egress proxy unreachable: no tunnel to 203.0.113.7:443 within 100 ms (${silent.proxy.origin})`,
    );
    await new Promise((resolve) => silent.server.close(resolve));
    servers.pop();
    server.close();
    servers.pop();
    await expect(tunnel(proxy)).rejects.toThrow(/^egress proxy unreachable: ECONNREFUSED/);
  });

  it('fails on an answer that is not HTTP', async () => {
    const { proxy, server } = await fakeProxy((_request, socket) => socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
    servers.push(server);
    await expect(tunnel(proxy)).rejects.toThrow('egress proxy sent no valid answer to CONNECT 203.0.113.7:443');
  });
});

describe('egressConnector', () => {
  const noSelf = { selfConnectionError: () => undefined };

  it('leaves a refused name to the URL policy, without reaching the proxy', async () => {
    const { proxy, received, server } = await fakeProxy((_request, socket) => socket.write('HTTP/1.1 200 OK\r\n\r\n'));
    const refused = Object.assign(new Error('refusing to connect to inside.test: it resolves to a private address (10.0.0.7)'), {
      code: 'EHOSTBLOCKED',
    });
    const lookup = ((_hostname: string, _options: unknown, callback: (error: Error | null, addresses: unknown[]) => void) =>
      callback(refused, [])) as unknown as LookupFunction;
    const connect = egressConnector(proxy, noSelf, { timeout: 1_000, lookup });
    const error = await new Promise<Error | null>((resolve) =>
      connect({ hostname: 'inside.test', host: 'inside.test', protocol: 'http:', port: '80' }, (...args) => resolve(args[0])),
    );
    expect(error).toBe(refused);
    expect(received).toEqual([]);
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses this service’s own address before asking the proxy', async () => {
    const { proxy, received, server } = await fakeProxy((_request, socket) => socket.write('HTTP/1.1 200 OK\r\n\r\n'));
    const own = Object.assign(new Error('refusing to deliver to me.test: it is Hookline itself'), { code: 'ESELF' });
    const lookup = ((_hostname: string, _options: unknown, callback: (error: null, addresses: unknown[]) => void) =>
      callback(null, [{ address: '127.0.0.1', family: 4 }])) as unknown as LookupFunction;
    const connect = egressConnector(proxy, { selfConnectionError: () => own as never }, { timeout: 1_000, lookup });
    const error = await new Promise<Error | null>((resolve) =>
      connect({ hostname: 'me.test', host: 'me.test:3000', protocol: 'http:', port: '3000' }, (...args) => resolve(args[0])),
    );
    expect(error).toBe(own);
    expect(received).toEqual([]);
    await new Promise((resolve) => server.close(resolve));
  });

  it('asks the proxy for the first checked address and the URL’s port (80 by default)', async () => {
    const { proxy, received, server } = await fakeProxy((_request, socket) => socket.write('HTTP/1.1 200 OK\r\n\r\n'));
    const lookup = ((_hostname: string, options: { all?: boolean }, callback: (error: null, addresses: unknown[]) => void) => {
      expect(options.all).toBe(true);
      callback(null, [
        { address: '198.51.100.4', family: 4 },
        { address: '198.51.100.5', family: 4 },
      ]);
    }) as unknown as LookupFunction;
    const connect = egressConnector(proxy, noSelf, { timeout: 1_000, lookup });
    const socket = await new Promise<Socket>((resolve, reject) =>
      connect({ hostname: 'hooks.example.com', host: 'hooks.example.com', protocol: 'http:', port: '' }, (e, s) =>
        e ? reject(e) : resolve(s),
      ),
    );
    socket.destroy();
    expect(received[0].split('\r\n')[0]).toBe('CONNECT 198.51.100.4:80 HTTP/1.1');
    await new Promise((resolve) => server.close(resolve));
  });
});
