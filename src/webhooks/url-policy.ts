import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import ipaddr from 'ipaddr.js';
import { findUnsafeCharacter } from '../common/safe-text';
import { AppConfig } from '../config/app-config';
import { type Listener, portOf, SelfAddress, type UrlTarget } from './self-address';

/**
 * Which webhook URLs Hookline accepts and which addresses it will connect to. The
 * same rules run at registration ({@link UrlPolicy.assertRegistrable}) and at every connection the
 * dispatcher opens ({@link UrlPolicy.lookup}, {@link UrlPolicy.assertAddressAllowed}), so a name
 * that was public when registered but later points inward (DNS rebinding) is still refused: the
 * socket connects to exactly the addresses that `lookup` checked.
 */

export const MAX_URL_LENGTH = 2048;

/**
 * - `EURLINVALID`: the URL itself breaks a rule (scheme, length, credentials...).
 * - `EHOSTBLOCKED`: the host is, or resolves to, an address that is not public unicast.
 * - `ENOTFOUND`: the host has no address (the same code `dns.lookup` uses).
 * - `ESELF`: the URL or connection leads to the service's own API (see {@link SelfAddress}).
 */
export type UrlPolicyErrorCode = 'EURLINVALID' | 'EHOSTBLOCKED' | 'ENOTFOUND' | 'ESELF';

/** A refused URL or address. The message is user-facing: it is the `message` of a 400. */
export class UrlPolicyError extends Error {
  constructor(
    message: string,
    readonly code: UrlPolicyErrorCode = 'EURLINVALID',
  ) {
    super(message);
    this.name = 'UrlPolicyError';
  }
}

export interface UrlPolicyOptions {
  /** Accept `http://` as well as `https://` (ALLOW_HTTP_URLS). */
  allowHttp: boolean;
  /** Accept any address a host resolves to, loopback and private included (ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: boolean;
  /**
   * Name the addresses a host resolved to in messages, and tell a name that does not resolve apart
   * from a refused one. Off in production: a store could otherwise map the private network's DNS.
   */
  revealAddresses?: boolean;
}

/** A refused name's message when addresses are not revealed: the same whether it resolves or not. */
export function undisclosedHostMessage(options: Pick<UrlPolicyOptions, 'allowPrivateNetworks'>): string {
  return options.allowPrivateNetworks
    ? 'url host is refused: endpoints must resolve to addresses other than this service’s own'
    : 'url host is refused: endpoints must resolve to public addresses only, other than this service’s own';
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a host name, in the resolver's order. Rejects (e.g. ENOTFOUND) when there is none. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * The operating system's resolver (getaddrinfo, so /etc/hosts counts), every address, in the order
 * it returns them. `order: 'verbatim'` is the current spelling of `verbatim: true`.
 */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/** DI token for the {@link Resolver} used by {@link UrlPolicy}; unbound, it is {@link systemResolver}. */
export const URL_RESOLVER = Symbol('URL_RESOLVER');

// ---------------------------------------------------------------------------------------------
// URL syntax

/**
 * Checks the URL's form and returns it parsed by the WHATWG URL parser, which also
 * normalises the host: `http://2130706433/`, `http://0x7f.1/` become `127.0.0.1`, so the address
 * checks below see one canonical notation. A fragment is accepted and kept: HTTP clients never send
 * it (RFC 9110 §7.1), so it changes nothing about where a delivery goes.
 */
export function checkUrlSyntax(raw: string, options: Pick<UrlPolicyOptions, 'allowHttp'>): URL {
  if (typeof raw !== 'string') throw new UrlPolicyError('url must be a string');
  if (raw.length > MAX_URL_LENGTH) {
    throw new UrlPolicyError(`url must be at most ${MAX_URL_LENGTH} characters`);
  }
  // The URL parser quietly removes tabs and line breaks anywhere and spaces at either end, and
  // replaces a lone surrogate: the URL stored would not be the one sent, so it is refused instead.
  const unsafe = findUnsafeCharacter(raw);
  if (unsafe) throw new UrlPolicyError(`url must not contain ${unsafe.kind} (found ${unsafe.codePoint})`);
  if (raw.trim() !== raw) throw new UrlPolicyError('url must not begin or end with spaces');
  let url: URL;
  try {
    url = new URL(raw); // no base: a relative reference throws
  } catch {
    throw new UrlPolicyError('url must be an absolute URL');
  }
  const schemes = options.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw new UrlPolicyError(options.allowHttp ? 'url must use https:// or http://' : 'url must use https://');
  }
  // Credentials in a URL end up in logs and in every attempt's record; the signature is the
  // authentication Hookline offers: no user:password part.
  if (url.username !== '' || url.password !== '') {
    throw new UrlPolicyError('url must not contain a username or password');
  }
  // The parser already refuses an empty host for http(s); kept so the rule does not rest on that.
  if (url.hostname === '') throw new UrlPolicyError('url must have a host');
  return url;
}

// ---------------------------------------------------------------------------------------------
// Address classification

export interface AddressVerdict {
  /** True only for public unicast. */
  allowed: boolean;
  /** The range the judged address falls in: ipaddr.js's name (`unicast`, `private`, `loopback`...) or one of ours. */
  range: string;
  /** The address actually judged: the IPv4 carried inside an IPv6 address, or the address itself, normalised. */
  judgedAs: string;
}

// Ranges ipaddr.js 2.5 does not single out (it reports them as 'unicast' or lumps them together).
/** IPv6 global unicast; the rest of the space is unassigned or special (RFC 4291 §2.4, IANA IPv6 Address Space). */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
/** Deprecated IPv4-compatible addresses `::a.b.c.d` (RFC 4291 §2.5.5.1). */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
/** NAT64 well-known prefix (RFC 6052 §2.1); ipaddr.js groups it with 64:ff9b:1::/48 as 'rfc6052'. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** Parses any notation getaddrinfo/inet_aton would accept ('127.1', '0x7f000001', '[::1]', 'fe80::1%eth0'). */
function parseIp(host: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  // A zone id (RFC 4007 §11) names an interface, not part of the address; ipaddr.js only accepts
  // [0-9a-z]+ zones, so 'fe80::1%eth0.100' would otherwise be "not an IP" and go to DNS.
  const zone = bare.indexOf('%');
  if (zone !== -1 && bare.includes(':')) bare = bare.slice(0, zone);
  return ipaddr.isValid(bare) ? ipaddr.parse(bare) : undefined;
}

function ipv4FromBits(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 address a packet to this IPv6 address actually reaches, where there is one. */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = ip.parts;
  switch (ip.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d (RFC 4291 §2.5.5.2)
    case 'rfc6145': //    ::ffff:0:a.b.c.d, IPv4-translated (RFC 6145 §2.1)
      return ipv4FromBits(p[6], p[7]);
    case 'rfc6052': //    64:ff9b::a.b.c.d, NAT64 well-known prefix, /96 format (RFC 6052 §2.2)
      return ip.match(NAT64_WELL_KNOWN) ? ipv4FromBits(p[6], p[7]) : undefined;
    case '6to4': //       2002:AABB:CCDD::/48, the IPv4 in bits 16–47 (RFC 3056 §2)
      return ipv4FromBits(p[1], p[2]);
    case 'teredo': //     2001:0:server:flags:port:client, client IPv4 stored inverted (RFC 4380 §4)
      return ipv4FromBits(p[6] ^ 0xffff, p[7] ^ 0xffff);
    case 'unicast': //    ::a.b.c.d, IPv4-compatible (RFC 4291 §2.5.5.1); '::' and '::1' have their own ranges
      return ip.match(IPV4_COMPATIBLE) ? ipv4FromBits(p[6], p[7]) : undefined;
    default:
      return undefined;
  }
}

function judge(ip: ipaddr.IPv4 | ipaddr.IPv6): AddressVerdict {
  if (ip.kind() === 'ipv4') {
    // ipaddr.js's IPv4 table covers the whole IANA special-purpose registry (RFC 6890): 0/8,
    // 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24, 192.88.99/24 (6to4
    // relay anycast), 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24, 224/4, 240/4, the
    // broadcast address, and the AS112/AMT anycast blocks, where no webhook receiver lives.
    const range = ip.range();
    return { allowed: range === 'unicast', range, judgedAs: ip.toString() };
  }
  const v6 = ip as ipaddr.IPv6;
  const carried = embeddedIPv4(v6);
  if (carried) return judge(carried);

  let range: string = v6.range();
  // What is left of 'rfc6052' is 64:ff9b:1::/48, reserved for local-use translation (RFC 8215).
  if (range === 'rfc6052') range = 'nat64LocalUse';
  // Outside 2000::/3 nothing is assigned as global unicast (e.g. 100:0:0:1::/64, RFC 9780).
  if (range === 'unicast' && !v6.match(GLOBAL_UNICAST)) range = 'reserved';
  return { allowed: range === 'unicast', range, judgedAs: v6.toString() };
}

/**
 * Judges one address: allowed only when it is public unicast. IPv4 carried inside IPv6
 * (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) is judged by that IPv4, and a zone id is
 * ignored. Anything that is not an IP address is refused with range `invalid`.
 */
export function classifyAddress(address: string): AddressVerdict {
  const ip = parseIp(address);
  if (!ip) return { allowed: false, range: 'invalid', judgedAs: address };
  return judge(ip);
}

const RANGE_DESCRIPTIONS: Record<string, string> = {
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  linkLocal: 'a link-local',
  loopback: 'a loopback',
  carrierGradeNat: 'a shared (carrier-grade NAT)',
  private: 'a private',
  reserved: 'a reserved',
  benchmarking: 'a benchmarking',
  uniqueLocal: 'a unique-local',
  deprecatedSiteLocal: 'a site-local',
  discard: 'a discard-only',
  nat64LocalUse: 'a local-use NAT64',
  invalid: 'an invalid',
};

/** "a private address (10.0.0.5)", "a loopback address (::ffff:7f00:1, which carries 127.0.0.1)". */
function describeAddress(address: string, verdict: AddressVerdict): string {
  const kind = RANGE_DESCRIPTIONS[verdict.range] ?? `a non-public (${verdict.range})`;
  const shown = address.replace(/^\[(.*)\]$/, '$1');
  const carried = parseIp(shown)?.kind() === 'ipv6' && !verdict.judgedAs.includes(':');
  return `${kind} address (${carried ? `${shown}, which carries ${verdict.judgedAs}` : shown})`;
}

/** The address of an IP literal in the form a socket accepts: unbracketed, normalised, zone kept. */
function literalAddress(host: string, ip: ipaddr.IPv4 | ipaddr.IPv6): ResolvedAddress {
  if (ip.kind() === 'ipv4') return { address: ip.toString(), family: 4 };
  const zone = /%.+$/.exec(host.replace(/^\[(.*)\]$/, '$1'))?.[0] ?? '';
  return { address: ip.toString() + zone, family: 6 };
}

// ---------------------------------------------------------------------------------------------
// Hosts

/**
 * Throws {@link UrlPolicyError} (code EHOSTBLOCKED) when `host` is an IP literal that is not
 * public unicast and private networks are not allowed. A host name passes: its addresses are
 * checked when it is resolved ({@link resolveAndCheck}, {@link UrlPolicy.lookup}). The dispatcher
 * calls this before connecting, because Node's net.connect never calls `lookup` for an IP literal.
 */
export function assertAddressAllowed(host: string, options: Pick<UrlPolicyOptions, 'allowPrivateNetworks'>): void {
  if (options.allowPrivateNetworks || !parseIp(host)) return;
  const verdict = classifyAddress(host);
  if (!verdict.allowed) {
    throw new UrlPolicyError(`refusing to connect to ${describeAddress(host, verdict)}`, 'EHOSTBLOCKED');
  }
}

/**
 * The addresses Hookline may connect to for `hostname` (a URL's `hostname`, so "[::1]" in brackets
 * is fine). An IP literal is judged as it is, without DNS; a name is resolved and refused when it
 * has no address or when ANY of its addresses is not public unicast: connecting to "the public
 * one" would let a name with one public and one private answer reach inside.
 */
export async function resolveAndCheck(
  hostname: string,
  options: Pick<UrlPolicyOptions, 'allowPrivateNetworks' | 'revealAddresses'>,
  resolver: Resolver = systemResolver,
): Promise<ResolvedAddress[]> {
  const ip = parseIp(hostname);
  if (ip) {
    const verdict = classifyAddress(hostname);
    if (!options.allowPrivateNetworks && !verdict.allowed) {
      throw new UrlPolicyError(`url host is ${describeAddress(hostname, verdict)}`, 'EHOSTBLOCKED');
    }
    return [literalAddress(hostname, ip)];
  }

  const reveal = options.revealAddresses !== false;
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolver(hostname);
  } catch (error) {
    const refused = resolutionError(error);
    if (!reveal && refused instanceof UrlPolicyError) throw new UrlPolicyError(undisclosedHostMessage(options), 'ENOTFOUND');
    throw refused;
  }
  if (addresses.length === 0) {
    throw new UrlPolicyError(reveal ? 'url host does not resolve' : undisclosedHostMessage(options), 'ENOTFOUND');
  }
  if (!options.allowPrivateNetworks) {
    for (const { address } of addresses) {
      const verdict = classifyAddress(address);
      if (!verdict.allowed) {
        const message = reveal ? `url resolves to ${describeAddress(address, verdict)}` : undisclosedHostMessage(options);
        throw new UrlPolicyError(message, 'EHOSTBLOCKED');
      }
    }
  }
  return addresses;
}

/** DNS failures become a 400 naming the cause; anything else (a bug) stays what it is. */
function resolutionError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return error;
  if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_NONAME') {
    return new UrlPolicyError('url host does not resolve', 'ENOTFOUND');
  }
  return new UrlPolicyError(`url host could not be resolved (${code})`, 'ENOTFOUND');
}

function wantedFamily(family: LookupOptions['family']): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The injectable policy

/** The URL policy with the configured options and resolver, for the webhooks service and the dispatcher. */
@Injectable()
export class UrlPolicy {
  private readonly options: UrlPolicyOptions;
  private readonly resolver: Resolver;
  private readonly self: SelfAddress;
  private readonly serviceName: string;
  private readonly publicOrigin: string;

  constructor(config: AppConfig, @Optional() @Inject(URL_RESOLVER) resolver?: Resolver, @Optional() adapterHost?: HttpAdapterHost) {
    this.options = {
      allowHttp: config.allowHttpUrls,
      allowPrivateNetworks: config.allowPrivateNetworks,
      revealAddresses: config.nodeEnv !== 'production',
    };
    this.resolver = resolver ?? systemResolver;
    this.serviceName = config.serviceName;
    this.publicOrigin = new URL(config.publicUrl).origin;
    this.self = new SelfAddress(config.publicUrl, () => listenersOf(config, adapterHost));
  }

  /**
   * Registration: the URL's form, then its host's addresses, and that it does not lead to this
   * service's own API. Resolves to the parsed (normalised) URL.
   */
  async assertRegistrable(raw: string): Promise<URL> {
    const url = checkUrlSyntax(raw, this.options);
    this.assertNotPublicOrigin(url, `url must not point at ${this.serviceName} itself`);
    // With private networks allowed there is no address to refuse, so a name that does not
    // resolve yet (DNS set up after the endpoint) is accepted; every connection still resolves it.
    let addresses: ResolvedAddress[] | undefined;
    if (!this.options.allowPrivateNetworks) addresses = await resolveAndCheck(url.hostname, this.options, this.resolver);
    const port = portOf(url);
    // Resolved only when the port is the server's: any other port cannot reach it.
    if (this.self.listensOnPort(port)) {
      addresses ??= await this.addressesOf(url.hostname);
      const own = addresses.find(({ address }) => this.self.isListeningAddress(address, port));
      if (own) {
        const literal = parseIp(url.hostname) !== undefined;
        if (!literal && this.options.revealAddresses === false) throw new UrlPolicyError(undisclosedHostMessage(this.options), 'ESELF');
        const where = literal
          ? `it listens on ${url.host}`
          : `${url.hostname} resolves to ${own.address}, where it listens on port ${port}`;
        throw new UrlPolicyError(`url must not point at ${this.serviceName} itself: ${where}`, 'ESELF');
      }
    }
    return url;
  }

  /**
   * Before a connection to `target` opens: refused (code ESELF) when it is PUBLIC_URL's host and
   * port, which serves this service's own API whatever address it resolves to.
   */
  assertNotPublicOrigin(target: UrlTarget, refusal = `refusing to connect to ${target.hostname}:${portOf(target)}`): void {
    if (this.self.isPublicOrigin(target)) {
      throw new UrlPolicyError(`${refusal}: ${this.publicOrigin} is its own API (PUBLIC_URL)`, 'ESELF');
    }
  }

  /**
   * Once a connection to `hostname` is open: the error to fail it with (code ESELF) when its far
   * end, `address`:`port`, is the address and port this service listens on; undefined otherwise.
   */
  selfConnectionError(hostname: string, address: string | undefined, port: number | undefined): UrlPolicyError | undefined {
    if (address === undefined || port === undefined || !this.self.isListeningAddress(address, port)) return undefined;
    const reached = this.options.revealAddresses === false ? '' : ` (it reached ${address}:${port}, where ${this.serviceName} listens)`;
    return new UrlPolicyError(`refusing to deliver to ${hostname}: it is ${this.serviceName} itself${reached}`, 'ESELF');
  }

  /** A literal's address, or the name's; none when it does not resolve (nothing to compare then). */
  private async addressesOf(hostname: string): Promise<ResolvedAddress[]> {
    const ip = parseIp(hostname);
    if (ip) return [literalAddress(hostname, ip)];
    return this.resolver(hostname).catch(() => []);
  }

  /** See {@link assertAddressAllowed}; call it with the URL's hostname before each connection. */
  assertAddressAllowed(host: string): void {
    assertAddressAllowed(host, this.options);
  }

  /**
   * A drop-in for `dns.lookup`, for undici's `Agent({ connect: { lookup } })` or an http.Agent:
   * the socket connects to the addresses returned here, which are exactly the ones checked, so no
   * second resolution can swap in a private address (DNS rebinding). A forbidden answer fails the
   * connection with an error whose code is EHOSTBLOCKED; resolver errors pass through unchanged
   * (ENOTFOUND, EAI_AGAIN...) so the dispatcher can treat them as retryable network failures.
   * Supports `all: true` (Node's happy-eyeballs connect asks for that) and the single-address form,
   * and the `family` option; other hints are ignored. A property, so it can be passed unbound.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const all = options?.all === true;
    void this.checkedAddresses(hostname, wantedFamily(options?.family)).then(
      (addresses) => {
        if (all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, all ? [] : ''),
    );
  };

  private async checkedAddresses(hostname: string, family: 0 | 4 | 6): Promise<ResolvedAddress[]> {
    const ip = parseIp(hostname);
    // Every answer is checked, not only those of the family asked for: the host is judged as a whole.
    const addresses = ip ? [literalAddress(hostname, ip)] : await this.resolver(hostname);
    if (!this.options.allowPrivateNetworks) {
      for (const { address } of addresses) {
        const verdict = classifyAddress(address);
        if (!verdict.allowed) {
          const resolved = this.options.revealAddresses === false ? 'a non-public address' : describeAddress(address, verdict);
          throw new UrlPolicyError(`refusing to connect to ${hostname}: it resolves to ${resolved}`, 'EHOSTBLOCKED');
        }
      }
    }
    const usable = addresses.filter((answer) => family === 0 || answer.family === family);
    if (usable.length === 0) {
      const wanted = family === 0 ? '' : ` IPv${family}`;
      throw new UrlPolicyError(`${hostname} has no${wanted} address`, 'ENOTFOUND');
    }
    return usable;
  }
}

/**
 * Where the HTTP server listens: its socket's address once it listens (a test's port 0 becomes
 * the port chosen), HOST and PORT before that or in a process without one.
 */
function listenersOf(config: AppConfig, adapterHost?: HttpAdapterHost): Listener[] {
  const server = adapterHost?.httpAdapter?.getHttpServer?.() as { address?: () => unknown } | undefined;
  const bound = server?.address?.();
  if (bound && typeof bound === 'object' && 'port' in bound) {
    const { address, port } = bound as { address: string; port: number };
    return [{ address, port }];
  }
  return [{ address: config.host, port: config.port }];
}
