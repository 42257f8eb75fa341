import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';

/** An address and port the HTTP server listens on (`0.0.0.0` or `::`: every address of the machine). */
export interface Listener {
  address: string;
  port: number;
}

/** The parts of a URL that say where it connects: `protocol` with its colon, `port` '' for the default. */
export type UrlTarget = Pick<URL, 'protocol' | 'hostname' | 'port'>;

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** The port a URL connects to, its scheme's default when it names none. */
export function portOf(url: UrlTarget): number {
  return url.port === '' ? (DEFAULT_PORTS[url.protocol] ?? 0) : Number(url.port);
}

/** Every address of the machine's network interfaces, as the operating system lists them now. */
export function machineAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

/** Parses an address ('[::1]', 'fe80::1%eth0', '::ffff:127.0.0.1'); an IPv4-mapped one as its IPv4. */
function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let bare = address.replace(/^\[(.*)\]$/, '$1');
  if (bare.includes(':')) bare = bare.replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return undefined;
  const ip = ipaddr.parse(bare);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

/**
 * Recognises the service's own API among endpoint URLs and outgoing connections, so that no
 * delivery becomes a request to that API (which can loop: docs/reliability.md). Two ways lead
 * there: the origin of PUBLIC_URL (through whatever proxy serves it), and the address and port the
 * server listens on. A server listening on every address (`0.0.0.0`, `::`), on a loopback address
 * or on a name is reached through any local address of the machine with that port.
 */
export class SelfAddress {
  private readonly publicHost: string;
  private readonly publicPorts: number[];

  constructor(
    publicUrl: string,
    /** Read at each check: the server may start listening after this is built, on a port chosen then. */
    private readonly listeners: () => Listener[],
    private readonly localAddresses: () => string[] = machineAddresses,
  ) {
    const url = new URL(publicUrl);
    this.publicHost = url.hostname.replace(/\.$/, '');
    const port = portOf(url);
    // A proxy serving a default port commonly serves the other scheme's default as well.
    this.publicPorts = port === 443 || port === 80 ? [port, port === 443 ? 80 : 443] : [port];
  }

  /** PUBLIC_URL's host (a trailing dot aside), at its port. */
  isPublicOrigin(url: UrlTarget): boolean {
    return url.hostname.replace(/\.$/, '').toLowerCase() === this.publicHost && this.publicPorts.includes(portOf(url));
  }

  /** Whether the server listens on `port` at all: only then is an address worth resolving and comparing. */
  listensOnPort(port: number): boolean {
    return this.listeners().some((listener) => listener.port === port);
  }

  /** Whether a connection to `address`:`port` reaches the server itself. */
  isListeningAddress(address: string, port: number): boolean {
    const target = parse(address);
    if (!target) return false;
    return this.listeners().some((listener) => {
      if (listener.port !== port) return false;
      const bound = parse(listener.address);
      if (!bound || ['unspecified', 'loopback'].includes(bound.range())) return this.isLocal(target);
      return bound.kind() === target.kind() && bound.toNormalizedString() === target.toNormalizedString();
    });
  }

  /** Loopback, the unspecified address (which connects to the machine itself), or an interface's address. */
  private isLocal(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    if (['unspecified', 'loopback'].includes(ip.range())) return true;
    const normalized = ip.toNormalizedString();
    return this.localAddresses().some((local) => {
      const parsed = parse(local);
      return parsed !== undefined && parsed.kind() === ip.kind() && parsed.toNormalizedString() === normalized;
    });
  }
}
