import { createServer, Server } from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import type { LookupOptions } from 'node:dns';
import type { HttpAdapterHost } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Agent, request } from 'undici';
import { AppConfig, loadConfig } from '../config/app-config';
import {
  assertAddressAllowed,
  checkUrlSyntax,
  classifyAddress,
  ResolvedAddress,
  resolveAndCheck,
  Resolver,
  URL_RESOLVER,
  UrlPolicy,
  UrlPolicyError,
} from './url-policy';

const STRICT = { allowHttp: false, allowPrivateNetworks: false };
const OPEN = { allowHttp: true, allowPrivateNetworks: true };

function v(address: string): ResolvedAddress {
  return { address, family: address.includes(':') ? 6 : 4 };
}

/** A fake DNS: names map to answers; anything else fails like getaddrinfo does. */
function fakeResolver(answers: Record<string, string[]>): jest.MockedFunction<Resolver> {
  return jest.fn(async (hostname: string) => {
    const found = answers[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map(v);
  });
}

function policyWith(resolver: Resolver, options: Partial<typeof STRICT> = {}): UrlPolicy {
  const { allowHttp, allowPrivateNetworks } = { ...STRICT, ...options };
  const config = loadConfig({}).with({ allowHttpUrls: allowHttp, allowPrivateNetworks });
  return new UrlPolicy(config, resolver);
}

type LookupResult = { error: NodeJS.ErrnoException | null; address: unknown; family?: number };

function callLookup(policy: UrlPolicy, hostname: string, options: LookupOptions): Promise<LookupResult> {
  return new Promise((resolve) => {
    policy.lookup(hostname, options, (error, address, family) => resolve({ error, address, family }));
  });
}

describe('classifyAddress', () => {
  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '100.128.0.1', '11.0.0.1', '223.255.255.254'])(
    'allows the public IPv4 address %s',
    (address) => {
      expect(classifyAddress(address)).toEqual({ allowed: true, range: 'unicast', judgedAs: address });
    },
  );

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', 'carrierGradeNat'],
    ['169.254.169.254', 'linkLocal'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.175.48.1', 'as112'],
  ])('refuses the IPv4 address %s (%s)', (address, range) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, range, judgedAs: address });
  });

  it.each(['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:81b::200e'])('allows the public IPv6 address %s', (address) => {
    expect(classifyAddress(address)).toMatchObject({ allowed: true, range: 'unicast' });
  });

  it.each([
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456:789a::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['100::1', 'discard'],
    ['2001:db8::1', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['64:ff9b:1::a00:1', 'nat64LocalUse'],
    ['4000::1', 'reserved'],
    ['100:0:0:1::1', 'reserved'],
  ])('refuses the IPv6 address %s (%s)', (address, range) => {
    expect(classifyAddress(address)).toMatchObject({ allowed: false, range });
  });

  it.each([
    ['::ffff:127.0.0.1', 'IPv4-mapped, dotted', '127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped, hex', '127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped, hex', '169.254.169.254', 'linkLocal'],
    ['::ffff:0:7f00:1', 'IPv4-translated', '127.0.0.1', 'loopback'],
    ['::7f00:1', 'IPv4-compatible', '127.0.0.1', 'loopback'],
    ['::10.0.0.1', 'IPv4-compatible, dotted', '10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'NAT64', '10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'NAT64', '127.0.0.1', 'loopback'],
    ['2002:7f00:1::', '6to4', '127.0.0.1', 'loopback'],
    ['2002:c0a8:101::1', '6to4', '192.168.1.1', 'private'],
    // Teredo: server 65.54.227.120, client 192.168.1.1 stored inverted (c0a8:0101 ^ ffff:ffff).
    ['2001:0:4136:e378:8000:63bf:3f57:fefe', 'Teredo', '192.168.1.1', 'private'],
  ])('judges %s (%s) by the IPv4 it carries', (address, _form, judgedAs, range) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, range, judgedAs });
  });

  it.each([
    ['::ffff:8.8.8.8', '8.8.8.8'],
    ['64:ff9b::808:808', '8.8.8.8'],
    ['2002:808:808::1', '8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', '8.8.8.8'],
  ])('allows %s, which carries the public %s', (address, judgedAs) => {
    expect(classifyAddress(address)).toEqual({ allowed: true, range: 'unicast', judgedAs });
  });

  it('is not confused by a zone id', () => {
    expect(classifyAddress('fe80::1%eth0')).toMatchObject({ allowed: false, range: 'linkLocal' });
    expect(classifyAddress('fe80::1%eth0.100')).toMatchObject({ allowed: false, range: 'linkLocal' });
    expect(classifyAddress('2606:4700:4700::1111%eth0')).toMatchObject({ allowed: true });
  });

  it('reads IPv4 in the notations inet_aton accepts', () => {
    for (const address of ['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '0x7f.1']) {
      expect(classifyAddress(address)).toEqual({ allowed: false, range: 'loopback', judgedAs: '127.0.0.1' });
    }
  });

  it('refuses what is not an IP address', () => {
    expect(classifyAddress('example.com')).toEqual({ allowed: false, range: 'invalid', judgedAs: 'example.com' });
    expect(classifyAddress('')).toMatchObject({ allowed: false, range: 'invalid' });
  });
});

describe('checkUrlSyntax', () => {
  it('accepts an https URL and returns it parsed', () => {
    const url = checkUrlSyntax('https://hooks.example.com/in?x=1', STRICT);
    expect(url.href).toBe('https://hooks.example.com/in?x=1');
  });

  it('refuses http:// unless http is allowed', () => {
    expect(() => checkUrlSyntax('http://hooks.example.com/', STRICT)).toThrow(new UrlPolicyError('url must use https://'));
    expect(checkUrlSyntax('http://hooks.example.com/', { allowHttp: true }).protocol).toBe('http:');
  });

  it.each(['ftp://example.com/file', 'file:///etc/passwd', 'javascript:alert(1)', 'ws://example.com/', 'data:text/plain,hi'])(
    'refuses the scheme of %s even when http is allowed',
    (raw) => {
      expect(() => checkUrlSyntax(raw, { allowHttp: true })).toThrow('url must use https:// or http://');
    },
  );

  it.each(['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/'])(
    'refuses credentials in %s',
    (raw) => {
      expect(() => checkUrlSyntax(raw, STRICT)).toThrow('url must not contain a username or password');
    },
  );

  it('refuses a URL longer than 2048 characters and accepts one of exactly 2048', () => {
    const base = 'https://example.com/';
    const exact = base + 'a'.repeat(2048 - base.length);
    expect(checkUrlSyntax(exact, STRICT).href).toBe(exact);
    expect(() => checkUrlSyntax(exact + 'a', STRICT)).toThrow('url must be at most 2048 characters');
  });

  it.each(['/hooks', 'example.com/hook', 'not a url', '', 'https://', 'https://exa mple.com/', 'http://[::1/'])(
    'refuses the relative or malformed %p',
    (raw) => {
      expect(() => checkUrlSyntax(raw, { allowHttp: true })).toThrow(UrlPolicyError);
    },
  );

  it.each([
    ['a line feed', 'https://hooks.example.com/a\nb', 'url must not contain a control character (found U+000A)'],
    ['a carriage return in the host', 'https://hooks.exam\rple.com/', 'url must not contain a control character (found U+000D)'],
    ['a tab', 'https://hooks.example.com/\tin', 'url must not contain a control character (found U+0009)'],
    ['a trailing line feed', 'https://hooks.example.com/in\n', 'url must not contain a control character (found U+000A)'],
    ['NUL', 'https://hooks.example.com/\u0000', 'url must not contain a control character (found U+0000)'],
    ['a lone surrogate', 'https://hooks.example.com/\ud800', 'url must not contain an unpaired surrogate (found U+D800)'],
    ['a right-to-left override', 'https://hooks.example.com/\u202Egpj', 'url must not contain a bidirectional control (found U+202E)'],
    ['a leading space', ' https://hooks.example.com/', 'url must not begin or end with spaces'],
    ['a trailing space', 'https://hooks.example.com/ ', 'url must not begin or end with spaces'],
  ])('refuses, rather than cleans, a URL with %s', (_case, raw, message) => {
    expect(() => checkUrlSyntax(raw, { allowHttp: true })).toThrow(new UrlPolicyError(message));
  });

  it('keeps a fragment (it is never sent)', () => {
    expect(checkUrlSyntax('https://example.com/in#section', STRICT).hash).toBe('#section');
  });

  it('tags syntax errors with the code EURLINVALID', () => {
    expect(() => checkUrlSyntax('nope', STRICT)).toThrow(expect.objectContaining({ code: 'EURLINVALID' }));
  });
});

describe('resolveAndCheck', () => {
  const noDns = fakeResolver({});

  beforeEach(() => noDns.mockClear());

  it.each([
    ['http://2130706433/', 'a loopback address (127.0.0.1)'],
    ['http://0x7f000001/', 'a loopback address (127.0.0.1)'],
    ['http://0177.0.0.1/', 'a loopback address (127.0.0.1)'],
    ['http://127.1/', 'a loopback address (127.0.0.1)'],
    ['http://0x7f.1/', 'a loopback address (127.0.0.1)'],
    ['http://0/', 'an unspecified address (0.0.0.0)'],
    ['http://[::1]/', 'a loopback address (::1)'],
    ['http://[::ffff:127.0.0.1]/', 'a loopback address (::ffff:7f00:1, which carries 127.0.0.1)'],
    ['http://[64:ff9b::a00:1]/', 'a private address (64:ff9b::a00:1, which carries 10.0.0.1)'],
    ['http://169.254.169.254/latest/meta-data/', 'a link-local address (169.254.169.254)'],
  ])('refuses the IP literal host of %s without asking DNS', async (raw, described) => {
    const url = checkUrlSyntax(raw, { allowHttp: true });
    await expect(resolveAndCheck(url.hostname, STRICT, noDns)).rejects.toThrow(
      new UrlPolicyError(`url host is ${described}`, 'EHOSTBLOCKED'),
    );
    expect(noDns).not.toHaveBeenCalled();
  });

  it('refuses a bare IP literal in any notation, not only the URL parser’s', async () => {
    await expect(resolveAndCheck('0x7f000001', STRICT, noDns)).rejects.toMatchObject({ code: 'EHOSTBLOCKED' });
    await expect(resolveAndCheck('[fe80::1%eth0]', STRICT, noDns)).rejects.toMatchObject({ code: 'EHOSTBLOCKED' });
    expect(noDns).not.toHaveBeenCalled();
  });

  it('accepts a public IP literal without asking DNS', async () => {
    await expect(resolveAndCheck('8.8.8.8', STRICT, noDns)).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
    await expect(resolveAndCheck('[2606:4700:4700::1111]', STRICT, noDns)).resolves.toEqual([
      { address: '2606:4700:4700::1111', family: 6 },
    ]);
    expect(noDns).not.toHaveBeenCalled();
  });

  it('rejects a URL that resolves to a private address', async () => {
    const resolver = fakeResolver({ 'hooks.example.com': ['10.1.2.3'] });
    await expect(resolveAndCheck('hooks.example.com', STRICT, resolver)).rejects.toThrow(
      new UrlPolicyError('url resolves to a private address (10.1.2.3)', 'EHOSTBLOCKED'),
    );
  });

  it('rejects a host with one public and one private address, whichever comes first', async () => {
    const publicFirst = fakeResolver({ 'mixed.example.com': ['93.184.215.14', '10.0.0.1'] });
    const privateFirst = fakeResolver({ 'mixed.example.com': ['fd00::1', '2606:4700:4700::1111'] });
    await expect(resolveAndCheck('mixed.example.com', STRICT, publicFirst)).rejects.toThrow('url resolves to a private address (10.0.0.1)');
    await expect(resolveAndCheck('mixed.example.com', STRICT, privateFirst)).rejects.toThrow(
      'url resolves to a unique-local address (fd00::1)',
    );
  });

  it('rejects a name whose AAAA answer carries a private IPv4', async () => {
    const resolver = fakeResolver({ 'sneaky.example.com': ['::ffff:169.254.169.254'] });
    await expect(resolveAndCheck('sneaky.example.com', STRICT, resolver)).rejects.toThrow(
      'url resolves to a link-local address (::ffff:169.254.169.254, which carries 169.254.169.254)',
    );
  });

  it('returns every address of a public host', async () => {
    const resolver = fakeResolver({ 'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    await expect(resolveAndCheck('hooks.example.com', STRICT, resolver)).resolves.toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
  });

  it('rejects a host that does not resolve', async () => {
    const empty: Resolver = async () => [];
    await expect(resolveAndCheck('nowhere.invalid', STRICT, fakeResolver({}))).rejects.toThrow(
      new UrlPolicyError('url host does not resolve', 'ENOTFOUND'),
    );
    await expect(resolveAndCheck('nowhere.invalid', OPEN, empty)).rejects.toThrow('url host does not resolve');
  });

  it('names a temporary DNS failure in the refusal', async () => {
    const failing: Resolver = () => Promise.reject(Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' }));
    await expect(resolveAndCheck('hooks.example.com', STRICT, failing)).rejects.toThrow('url host could not be resolved (EAI_AGAIN)');
  });

  it('accepts loopback and private answers when private networks are allowed', async () => {
    const resolver = fakeResolver({ 'receiver.internal': ['10.1.2.3'], localhost: ['127.0.0.1', '::1'] });
    await expect(resolveAndCheck('127.0.0.1', OPEN, resolver)).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(resolveAndCheck('[::1]', OPEN, resolver)).resolves.toEqual([{ address: '::1', family: 6 }]);
    await expect(resolveAndCheck('localhost', OPEN, resolver)).resolves.toHaveLength(2);
    await expect(resolveAndCheck('receiver.internal', OPEN, resolver)).resolves.toEqual([v('10.1.2.3')]);
  });
});

describe('assertAddressAllowed', () => {
  it('refuses a forbidden IP literal before connecting', () => {
    expect(() => assertAddressAllowed('127.0.0.1', STRICT)).toThrow(
      new UrlPolicyError('refusing to connect to a loopback address (127.0.0.1)', 'EHOSTBLOCKED'),
    );
    expect(() => assertAddressAllowed('[::ffff:7f00:1]', STRICT)).toThrow(/which carries 127\.0\.0\.1/);
  });

  it('lets a public literal and a host name through (names are checked by lookup)', () => {
    expect(() => assertAddressAllowed('8.8.8.8', STRICT)).not.toThrow();
    expect(() => assertAddressAllowed('hooks.example.com', STRICT)).not.toThrow();
  });

  it('allows anything when private networks are allowed', () => {
    expect(() => assertAddressAllowed('127.0.0.1', OPEN)).not.toThrow();
  });
});

describe('UrlPolicy', () => {
  it('takes its options from AppConfig and its resolver from URL_RESOLVER', async () => {
    const resolver = fakeResolver({ 'hooks.example.com': ['10.1.2.3'] });
    const moduleRef = await Test.createTestingModule({
      providers: [
        UrlPolicy,
        { provide: AppConfig, useValue: loadConfig({ ALLOW_HTTP_URLS: 'false', ALLOW_PRIVATE_NETWORKS: 'false' }) },
        { provide: URL_RESOLVER, useValue: resolver },
      ],
    }).compile();
    const policy = moduleRef.get(UrlPolicy);
    await expect(policy.assertRegistrable('http://hooks.example.com/')).rejects.toThrow('url must use https://');
    await expect(policy.assertRegistrable('https://hooks.example.com/')).rejects.toThrow('url resolves to a private address (10.1.2.3)');
    expect(resolver).toHaveBeenCalledWith('hooks.example.com');
  });

  it('falls back to the system resolver when no URL_RESOLVER is bound', async () => {
    const config = loadConfig({ ALLOW_PRIVATE_NETWORKS: 'false' });
    const moduleRef = await Test.createTestingModule({
      providers: [UrlPolicy, { provide: AppConfig, useValue: config }],
    }).compile();
    // localhost is answered by /etc/hosts (or refused as unresolvable): no network either way.
    await expect(moduleRef.get(UrlPolicy).assertRegistrable('https://localhost/')).rejects.toThrow(UrlPolicyError);
  });

  it('returns the parsed URL of a registrable public host', async () => {
    const policy = policyWith(fakeResolver({ 'hooks.example.com': ['93.184.215.14'] }));
    const url = await policy.assertRegistrable('https://hooks.example.com/in');
    expect(url.href).toBe('https://hooks.example.com/in');
  });

  describe('lookup', () => {
    it('passes a public answer through in the all: true form', async () => {
      const policy = policyWith(fakeResolver({ 'hooks.example.com': ['93.184.215.14', '2606:4700:4700::1111'] }));
      await expect(callLookup(policy, 'hooks.example.com', { all: true })).resolves.toEqual({
        error: null,
        address: [
          { address: '93.184.215.14', family: 4 },
          { address: '2606:4700:4700::1111', family: 6 },
        ],
        family: undefined,
      });
    });

    it('passes a public answer through in the single-address form', async () => {
      const policy = policyWith(fakeResolver({ 'hooks.example.com': ['93.184.215.14', '2606:4700:4700::1111'] }));
      await expect(callLookup(policy, 'hooks.example.com', {})).resolves.toEqual({
        error: null,
        address: '93.184.215.14',
        family: 4,
      });
    });

    it('honours the family option', async () => {
      const policy = policyWith(fakeResolver({ 'hooks.example.com': ['93.184.215.14', '2606:4700:4700::1111'] }));
      await expect(callLookup(policy, 'hooks.example.com', { family: 6 })).resolves.toMatchObject({
        address: '2606:4700:4700::1111',
        family: 6,
      });
      await expect(callLookup(policy, 'hooks.example.com', { family: 'IPv4', all: true })).resolves.toMatchObject({
        address: [{ address: '93.184.215.14', family: 4 }],
      });
      const v4Only = policyWith(fakeResolver({ 'v4.example.com': ['93.184.215.14'] }));
      const { error } = await callLookup(v4Only, 'v4.example.com', { family: 6 });
      expect(error).toMatchObject({ code: 'ENOTFOUND' });
    });

    it('refuses a rebinding answer that was public at registration', async () => {
      const resolver: jest.MockedFunction<Resolver> = jest
        .fn<Promise<ResolvedAddress[]>, [string]>()
        .mockResolvedValueOnce([v('93.184.215.14')])
        .mockResolvedValue([v('127.0.0.1')]);
      const policy = policyWith(resolver);
      await expect(policy.assertRegistrable('https://rebind.example.com/')).resolves.toBeInstanceOf(URL);

      for (const options of [{ all: true }, {}]) {
        const { error, address } = await callLookup(policy, 'rebind.example.com', options);
        expect(error).toBeInstanceOf(UrlPolicyError);
        expect(error).toMatchObject({
          code: 'EHOSTBLOCKED',
          message: 'refusing to connect to rebind.example.com: it resolves to a loopback address (127.0.0.1)',
        });
        expect(address).toEqual(options.all ? [] : '');
      }
    });

    it('refuses when any answer is forbidden, even one of a family not asked for', async () => {
      const policy = policyWith(fakeResolver({ 'mixed.example.com': ['93.184.215.14', 'fe80::1'] }));
      const { error } = await callLookup(policy, 'mixed.example.com', { family: 4 });
      expect(error).toMatchObject({ code: 'EHOSTBLOCKED' });
    });

    it('checks an IP literal without asking DNS', async () => {
      const resolver = fakeResolver({});
      const policy = policyWith(resolver);
      expect((await callLookup(policy, '10.0.0.1', {})).error).toMatchObject({ code: 'EHOSTBLOCKED' });
      expect(await callLookup(policy, '8.8.8.8', { all: true })).toMatchObject({
        error: null,
        address: [{ address: '8.8.8.8', family: 4 }],
      });
      expect(resolver).not.toHaveBeenCalled();
    });

    it('passes resolver errors through unchanged', async () => {
      const failure = Object.assign(new Error('getaddrinfo EAI_AGAIN hooks.example.com'), { code: 'EAI_AGAIN' });
      const policy = policyWith(() => Promise.reject(failure));
      expect((await callLookup(policy, 'hooks.example.com', { all: true })).error).toBe(failure);
    });

    it('passes loopback answers through when private networks are allowed', async () => {
      const policy = policyWith(fakeResolver({ 'receiver.test': ['127.0.0.1'] }), { allowPrivateNetworks: true });
      await expect(callLookup(policy, 'receiver.test', {})).resolves.toEqual({
        error: null,
        address: '127.0.0.1',
        family: 4,
      });
    });
  });

  describe('as the lookup of an undici Agent', () => {
    let server: Server;
    let port: number;

    beforeAll(async () => {
      server = createServer((_req, res) => res.end('ok'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    async function get(policy: UrlPolicy): Promise<number> {
      const agent = new Agent({ connect: { lookup: policy.lookup } });
      try {
        const response = await request(`http://receiver.test:${port}/`, { dispatcher: agent });
        await response.body.dump();
        return response.statusCode;
      } finally {
        await agent.close();
      }
    }

    it('connects to the address the resolver returned', async () => {
      const policy = policyWith(fakeResolver({ 'receiver.test': ['127.0.0.1'] }), OPEN);
      await expect(get(policy)).resolves.toBe(200);
    });

    it('fails the connection with EHOSTBLOCKED when that address is forbidden', async () => {
      const policy = policyWith(fakeResolver({ 'receiver.test': ['127.0.0.1'] }), { allowHttp: true });
      await expect(get(policy)).rejects.toMatchObject({ code: 'EHOSTBLOCKED' });
    });
  });
});

describe('UrlPolicy and the service itself', () => {
  const listening = { address: '127.0.0.1', port: 41999 };
  const adapterHost = { httpAdapter: { getHttpServer: () => ({ address: () => listening }) } } as unknown as HttpAdapterHost;
  const dns = fakeResolver({ 'loop.example.com': ['127.0.0.1'], 'hooks.example.com': ['93.184.215.14'] });

  /** `host` null: no HTTP server. */
  function selfPolicy(env: Record<string, string> = {}, host: HttpAdapterHost | null = adapterHost): UrlPolicy {
    return new UrlPolicy(loadConfig({ PUBLIC_URL: 'https://hooks.example.com', ...env }), dns, host ?? undefined);
  }

  it("refuses PUBLIC_URL's host and port, whatever it resolves to", async () => {
    await expect(selfPolicy().assertRegistrable('https://hooks.example.com/api/v1/external/deliveries/del_1/retry')).rejects.toThrow(
      new UrlPolicyError('url must not point at Hookline itself: https://hooks.example.com is its own API (PUBLIC_URL)', 'ESELF'),
    );
    await expect(selfPolicy().assertRegistrable('https://hooks.example.com:8443/hook')).resolves.toBeInstanceOf(URL);
  });

  it('refuses the port the server listens on at any local address, by literal or by name', async () => {
    const policy = selfPolicy();
    await expect(policy.assertRegistrable('http://127.0.0.1:41999/api')).rejects.toThrow(
      new UrlPolicyError('url must not point at Hookline itself: it listens on 127.0.0.1:41999', 'ESELF'),
    );
    await expect(policy.assertRegistrable('http://[::1]:41999/api')).rejects.toMatchObject({ code: 'ESELF' });
    await expect(policy.assertRegistrable('http://loop.example.com:41999/api')).rejects.toThrow(
      'url must not point at Hookline itself: loop.example.com resolves to 127.0.0.1, where it listens on port 41999',
    );
  });

  it('accepts local addresses on other ports, and a name that does not resolve yet', async () => {
    const policy = selfPolicy();
    await expect(policy.assertRegistrable('http://127.0.0.1:41998/api')).resolves.toBeInstanceOf(URL);
    await expect(policy.assertRegistrable('http://loop.example.com:41998/api')).resolves.toBeInstanceOf(URL);
    await expect(policy.assertRegistrable('http://later.example.com:41999/api')).resolves.toBeInstanceOf(URL);
  });

  it('takes HOST and PORT when the server does not listen (yet)', async () => {
    const policy = selfPolicy({ PORT: '4100' }, null);
    await expect(policy.assertRegistrable('http://127.0.0.1:4100/')).rejects.toMatchObject({ code: 'ESELF' });
    await expect(policy.assertRegistrable('http://127.0.0.1:41999/')).resolves.toBeInstanceOf(URL);
  });

  it('refuses a connection to the public origin, and names a connection that reached the server', () => {
    const policy = selfPolicy();
    expect(() => policy.assertNotPublicOrigin({ protocol: 'https:', hostname: 'hooks.example.com', port: '' })).toThrow(
      new UrlPolicyError('refusing to connect to hooks.example.com:443: https://hooks.example.com is its own API (PUBLIC_URL)', 'ESELF'),
    );
    expect(() => policy.assertNotPublicOrigin({ protocol: 'https:', hostname: 'shop.example.com', port: '' })).not.toThrow();
    expect(policy.selfConnectionError('loop.example.com', '127.0.0.1', 41999)).toEqual(
      new UrlPolicyError(
        'refusing to deliver to loop.example.com: it is Hookline itself (it reached 127.0.0.1:41999, where Hookline listens)',
        'ESELF',
      ),
    );
    expect(policy.selfConnectionError('loop.example.com', '127.0.0.1', 41998)).toBeUndefined();
    expect(policy.selfConnectionError('loop.example.com', undefined, undefined)).toBeUndefined();
  });
});

describe('UrlPolicy with NODE_ENV=production', () => {
  const production = loadConfig({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') });
  const dns = fakeResolver({ 'internal.example.com': ['10.0.0.7'], 'mixed.example.com': ['93.184.215.14', '127.0.0.1'] });
  const refused = 'url host is refused: endpoints must resolve to public addresses only, other than this service’s own';

  it('answers the same for a name that resolves to a refused address and for one that does not resolve', async () => {
    const policy = new UrlPolicy(production, dns);
    for (const url of ['https://internal.example.com/', 'https://mixed.example.com/', 'https://nowhere.example.com/']) {
      await expect(policy.assertRegistrable(url)).rejects.toThrow(new UrlPolicyError(refused));
    }
    const broken = new UrlPolicy(production, () => Promise.reject(Object.assign(new Error('timeout'), { code: 'EAI_AGAIN' })));
    await expect(broken.assertRegistrable('https://slow.example.com/')).rejects.toThrow(refused);
  });

  it('still describes an IP literal, which the URL itself shows', async () => {
    await expect(new UrlPolicy(production, dns).assertRegistrable('https://10.0.0.7/')).rejects.toThrow(
      'url host is a private address (10.0.0.7)',
    );
  });

  it('names no resolved address when a connection is refused', async () => {
    const result = await callLookup(new UrlPolicy(production, dns), 'internal.example.com', { all: true });
    expect(result.error?.message).toBe('refusing to connect to internal.example.com: it resolves to a non-public address');
    const self = new UrlPolicy(production.with({ allowPrivateNetworks: true, port: 41999 }), dns);
    expect(self.selfConnectionError('loop.example.com', '127.0.0.1', 41999)?.message).toBe(
      'refusing to deliver to loop.example.com: it is Hookline itself',
    );
  });

  it('answers a name that resolves to the server itself as any refused name', async () => {
    const adapterHost = { httpAdapter: { getHttpServer: () => ({ address: () => ({ address: '0.0.0.0', port: 443 }) }) } };
    const policy = new UrlPolicy(
      production,
      fakeResolver({ 'own.example.com': ['93.184.215.14'] }),
      adapterHost as unknown as HttpAdapterHost,
    );
    const machine = jest.spyOn(os, 'networkInterfaces').mockReturnValue({
      eth0: [{ address: '93.184.215.14', netmask: '255.255.255.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: false, cidr: null }],
    });
    try {
      await expect(policy.assertRegistrable('https://own.example.com/')).rejects.toThrow(new UrlPolicyError(refused, 'ESELF'));
      await expect(policy.assertRegistrable('https://93.184.215.14/')).rejects.toThrow(
        'url must not point at Hookline itself: it listens on 93.184.215.14',
      );
    } finally {
      machine.mockRestore();
    }
  });
});
