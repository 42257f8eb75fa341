import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { URL_RESOLVER } from '../src/webhooks/url-policy';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { expectError, expectJson, fakeResolver, rowCounts } from './support/expectations';
import { createWebhook, delivery, deliveriesOf, orderData, publish } from './support/fixtures';

/**
 * SSRF end to end with ALLOW_PRIVATE_NETWORKS=false: registration
 * refuses every notation of a non-public address and every name that resolves to one; and a name
 * that was public at registration but points at 127.0.0.1 when the delivery goes out (DNS
 * rebinding, played by a fake resolver whose answer changes) is refused before any connection is
 * made: the receiver on 127.0.0.1 sees no TCP connection at all, on the dispatcher's path and on
 * POST /webhooks/:id/test alike.
 */

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:4700:4700::1111';

/** An HTTP server on 127.0.0.1 that counts TCP connections, not only requests. */
class CountingServer {
  connections = 0;
  requests = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<CountingServer> {
    const server = createServer((req, res) => {
      counting.requests++;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'));
    });
    server.on('connection', () => counting.connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const counting: CountingServer = new CountingServer(server, (server.address() as AddressInfo).port);
    return counting;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Every way of writing a non-public address that a URL can carry, with the range it must be judged as. */
const PRIVATE_LITERALS: Array<[string, string]> = [
  // IPv4, dotted
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'shared (carrier-grade NAT)'],
  ['169.254.169.254', 'link-local'],
  ['0.0.0.0', 'unspecified'],
  ['224.0.0.251', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['198.18.0.1', 'reserved'], // benchmarking (RFC 2544)
  ['192.0.2.10', 'reserved'],
  // IPv4, other notations (the WHATWG parser and inet_aton agree on all of them)
  ['2130706433', 'loopback'], // decimal
  ['3232235777', 'private'], // decimal 192.168.1.1
  ['2852039166', 'link-local'], // decimal 169.254.169.254
  ['0x7f000001', 'loopback'], // hex
  ['0x7F.0x0.0x0.0x1', 'loopback'], // hex octets
  ['0xa9.0xfe.0xa9.0xfe', 'link-local'],
  ['0177.0.0.1', 'loopback'], // octal
  ['017700000001', 'loopback'], // octal, one number
  ['0177.0.0.01', 'loopback'],
  ['012.0.0.1', 'private'], // octal 10.0.0.1
  ['127.1', 'loopback'], // short forms
  ['127.0.1', 'loopback'],
  ['10.1', 'private'],
  ['0', 'unspecified'],
  ['0x7f.1', 'loopback'],
  ['127.0.0.1.', 'loopback'], // trailing dot
  ['%31%32%37.0.0.1', 'loopback'], // percent-encoded
  ['１２７.０.０.１', 'loopback'], // full-width digits (IDNA maps them)
  // IPv6
  ['[::1]', 'loopback'],
  ['[0:0:0:0:0:0:0:1]', 'loopback'],
  ['[::]', 'unspecified'],
  ['[fe80::1]', 'link-local'],
  ['[fc00::1]', 'unique-local'],
  ['[fd12:3456:789a::1]', 'unique-local'],
  ['[ff02::1]', 'multicast'],
  ['[fec0::1]', 'site-local'],
  ['[2001:db8::1]', 'reserved'],
  ['[100::1]', 'discard-only'],
  // IPv4 carried in IPv6: judged by the IPv4
  ['[::ffff:127.0.0.1]', 'loopback'], // IPv4-mapped
  ['[::ffff:7f00:1]', 'loopback'],
  ['[::ffff:10.0.0.1]', 'private'],
  ['[::ffff:169.254.169.254]', 'link-local'],
  ['[0:0:0:0:0:ffff:7f00:1]', 'loopback'],
  ['[::127.0.0.1]', 'loopback'], // IPv4-compatible
  ['[::ffff:0:127.0.0.1]', 'loopback'], // IPv4-translated
  ['[64:ff9b::127.0.0.1]', 'loopback'], // NAT64
  ['[64:ff9b::a9fe:a9fe]', 'link-local'],
  ['[2002:7f00:1::]', 'loopback'], // 6to4
  ['[2002:a9fe:a9fe::1]', 'link-local'],
  ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', 'loopback'], // Teredo, client 127.0.0.1 inverted
];

/** Names and what the (fake) DNS answers for them. */
const NAME_ANSWERS: Record<string, string[]> = {
  'hooks.example.com': [PUBLIC_V4],
  'v6.example.com': [PUBLIC_V6],
  'internal.example.com': ['10.0.0.7'],
  localhost: ['127.0.0.1', '::1'],
  'localtest.example.com': ['127.0.0.1'],
  'mixed.example.com': [PUBLIC_V4, '192.168.1.20'],
  'mixed6.example.com': [PUBLIC_V6, 'fd00::5'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'nat64.example.com': ['64:ff9b::a00:1'],
  'zero.example.com': ['0.0.0.0'],
  'cgnat.example.com': ['100.100.100.200'],
  'linklocal6.example.com': ['fe80::1'],
};
const PRIVATE_NAMES = Object.keys(NAME_ANSWERS).filter((name) => !['hooks.example.com', 'v6.example.com'].includes(name));

describe('SSRF with ALLOW_PRIVATE_NETWORKS=false', () => {
  let t: TestApp;
  let receiver: CountingServer;
  const answers: Record<string, string[]> = { ...NAME_ANSWERS };
  // Like getaddrinfo, the fake DNS takes a fully qualified name ('name.') for the name itself.
  const dns = fakeResolver(answers);
  const resolver = jest.fn((hostname: string) => dns(hostname.replace(/\.$/, '')));

  beforeAll(async () => {
    receiver = await CountingServer.start();
    t = await startApp({
      // http:// stays allowed so that the rebinding cases can aim at the plain-HTTP receiver.
      env: { ALLOW_PRIVATE_NETWORKS: 'false', ALLOW_HTTP_URLS: 'true', RETRY_SCHEDULE_MS: '0' },
      overrides: [{ provide: URL_RESOLVER, useValue: resolver }],
    });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  async function expectRefused(url: string, message: RegExp): Promise<void> {
    const before = await rowCounts(t.db);
    const body = await expectError(
      await t.api('/webhooks', { method: 'POST', json: { name: 'ssrf', url, events: ['order.created'] } }),
      400,
    );
    expect(body.message).toEqual([expect.stringMatching(message)]);
    expect(await rowCounts(t.db)).toEqual(before);
  }

  describe('registration', () => {
    it.each(PRIVATE_LITERALS)('refuses the literal %s (%s), over https and http, on any port', async (host, range) => {
      const judged = new RegExp(`^url host is an? ${range.replace(/[()]/g, '\\$&')} address \\(`);
      await expectRefused(`https://${host}/hook`, judged);
      await expectRefused(`http://${host}:8080/hook?x=1`, judged);
    });

    it('judges IP literals without asking DNS', async () => {
      resolver.mockClear();
      for (const [host] of PRIVATE_LITERALS.slice(0, 10)) await expectRefused(`https://${host}/`, /^url host is/);
      expect(resolver).not.toHaveBeenCalled();
    });

    it.each(PRIVATE_NAMES)('refuses the name %s, which resolves to a non-public address', async (name) => {
      await expectRefused(`https://${name}/hook`, /^url resolves to an? .+ address \(/);
      await expectRefused(`https://${name.toUpperCase()}./hook`, /^url resolves to an? .+ address \(/);
    });

    it('refuses a private address in a PUT as well, and changes nothing', async () => {
      const hook = await createWebhook(t, 'https://hooks.example.com/put');
      const before = await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id]);
      for (const url of ['https://[::ffff:127.0.0.1]/', 'https://0x7f.1/', 'https://internal.example.com/', 'http://2130706433/']) {
        await expectError(await t.api(`/webhooks/${hook.id}`, { method: 'PUT', json: { url } }), 400);
      }
      expect(await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id])).toEqual(before);
      await t.api(`/webhooks/${hook.id}`, { method: 'DELETE' });
    });

    it.each([
      'https://hooks.example.com/hook',
      'https://v6.example.com/hook',
      `https://${PUBLIC_V4}/`,
      `https://[${PUBLIC_V6}]/`,
      'https://[::ffff:93.184.215.14]/',
    ])('accepts the public %s', async (url) => {
      const created = await expectJson<{ id: string; url: string }>(
        await t.api('/webhooks', { method: 'POST', json: { name: 'public', url, events: ['order.created'] } }),
        201,
      );
      expect(created.url).toBe(new URL(url).href);
      // Nothing may ever be sent to these real addresses from a test.
      await t.api(`/webhooks/${created.id}`, { method: 'DELETE' });
    });
  });

  describe('DNS rebinding: public at registration, 127.0.0.1 at send time', () => {
    it.each<[string, string[], RegExp]>([
      ['rebind-v4.example.com', ['127.0.0.1'], /loopback address \(127\.0\.0\.1\)/],
      ['rebind-mapped.example.com', ['::ffff:127.0.0.1'], /loopback address \(::ffff:127\.0\.0\.1, which carries 127\.0\.0\.1\)/],
      ['rebind-mixed.example.com', [PUBLIC_V4, '127.0.0.1'], /loopback address \(127\.0\.0\.1\)/],
    ])('refuses %s without connecting, on the dispatcher path and on POST /test', async (name, rebound, described) => {
      answers[name] = [PUBLIC_V4];
      const hook = await createWebhook(t, `http://${name}:${receiver.port}/hook`, ['order.updated']);
      answers[name] = rebound;
      const connectionsBefore = receiver.connections;
      try {
        // The dispatcher's path.
        const event = await publish(t, 'order.updated', orderData(1));
        expect(event.deliveries).toBe(1);
        const [row] = await eventually(
          () => deliveriesOf(t, hook.id),
          (rows) => rows.length === 1 && rows[0].status === 'failed',
          { what: 'the rebound delivery to fail' },
        );
        const detail = await delivery(t, row.id);
        expect(detail.attempts).toEqual([expect.objectContaining({ number: 1, statusCode: null, responseBody: null })]);
        expect(detail.lastError).toMatch(/^blocked: refusing to connect to /);
        expect(detail.lastError).toMatch(described);

        // POST /webhooks/:id/test: synchronous, recorded like any other.
        const tested = await expectJson<{ success: boolean; statusCode: number | null; error: string; deliveryId: string }>(
          await t.api(`/webhooks/${hook.id}/test`, { method: 'POST' }),
          200,
        );
        expect(tested).toMatchObject({ success: false, statusCode: null, error: expect.stringMatching(/^blocked: /) });
        expect(tested.error).toMatch(described);
        expect((await delivery(t, tested.deliveryId)).attempts).toEqual([expect.objectContaining({ error: tested.error })]);

        expect(receiver.connections - connectionsBefore).toBe(0);
        expect(receiver.requests).toBe(0);
      } finally {
        await t.api(`/webhooks/${hook.id}`, { method: 'DELETE' });
        answers[name] = [PUBLIC_V4];
      }
    });

    it('asked the resolver at send time, not only at registration', async () => {
      resolver.mockClear();
      answers['late.example.com'] = [PUBLIC_V4];
      const hook = await createWebhook(t, `http://late.example.com:${receiver.port}/hook`, ['order.updated']);
      answers['late.example.com'] = ['10.0.0.8'];
      const tested = await expectJson<{ error: string }>(await t.api(`/webhooks/${hook.id}/test`, { method: 'POST' }), 200);
      expect(tested.error).toMatch(/^blocked: .*private address \(10\.0\.0\.8\)/);
      expect(resolver.mock.calls.filter(([name]) => name === 'late.example.com')).toHaveLength(2);
      expect(receiver.connections).toBe(0);
      await t.api(`/webhooks/${hook.id}`, { method: 'DELETE' });
    });
  });
});

/**
 * The control: the same rebinding with ALLOW_PRIVATE_NETWORKS=true does connect, so the zero
 * connections above are the policy's doing and not the test's.
 */
describe('the same rebinding with ALLOW_PRIVATE_NETWORKS=true (control)', () => {
  it('connects to 127.0.0.1 and delivers', async () => {
    const receiver = await CountingServer.start();
    const answers: Record<string, string[]> = { 'rebind.example.com': [PUBLIC_V4] };
    const t = await startApp({
      env: { ALLOW_PRIVATE_NETWORKS: 'true' },
      overrides: [{ provide: URL_RESOLVER, useValue: fakeResolver(answers) }],
    });
    try {
      const hook = await createWebhook(t, `http://rebind.example.com:${receiver.port}/hook`);
      answers['rebind.example.com'] = ['127.0.0.1'];
      const tested = await expectJson(await t.api(`/webhooks/${hook.id}/test`, { method: 'POST' }), 200);
      expect(tested).toMatchObject({ success: true, statusCode: 200 });
      expect(receiver.connections).toBe(1);
      expect(receiver.requests).toBe(1);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});

/**
 * In production a refused name's message tells nothing of the DNS behind it: no address, and the
 * same words whether the name resolves (to a private address, or to a mix) or does not resolve.
 */
describe('refusal messages with NODE_ENV=production', () => {
  let t: TestApp;
  const refused = 'url host is refused: endpoints must resolve to public addresses only, other than this service’s own';

  beforeAll(async () => {
    t = await startApp({
      env: { NODE_ENV: 'production' },
      overrides: [{ provide: URL_RESOLVER, useValue: fakeResolver(NAME_ANSWERS) }],
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  it.each(['internal.example.com', 'metadata.example.com', 'mixed.example.com', 'mapped.example.com', 'nowhere.example.com'])(
    'answers %s with one message that names no address and does not say whether it resolves',
    async (name) => {
      const before = await rowCounts(t.db);
      const body = await expectError(
        await t.api('/webhooks', { method: 'POST', json: { name: 'ssrf', url: `https://${name}/hook`, events: ['order.created'] } }),
        400,
      );
      expect(body.message).toEqual([refused]);
      expect(await rowCounts(t.db)).toEqual(before);
    },
  );

  it('still describes an address written in the URL itself', async () => {
    await expectError(
      await t.api('/webhooks', { method: 'POST', json: { name: 'ssrf', url: 'https://10.0.0.7/hook', events: ['order.created'] } }),
      400,
      'url host is a private address (10.0.0.7)',
    );
  });
});
