import { connect as netConnect, isIPv6, type LookupFunction, type Socket } from 'node:net';
import { buildConnector } from 'undici';
import type { EgressProxy } from '../../config/egress-proxy';
import type { UrlPolicy } from '../../webhooks/url-policy';

/** The code of an error on the way through the egress proxy (it could not be reached, or refused the tunnel). */
export const EGRESS_PROXY_ERROR_CODE = 'EEGRESSPROXY';

/** The proxy could not be reached, or did not open the tunnel; the message says which, for the attempt log. */
export class EgressProxyError extends Error {
  readonly code = EGRESS_PROXY_ERROR_CODE;
}

/** The longest CONNECT answer read: a status line and a few headers. */
const MAX_ANSWER_BYTES = 16 * 1024;

/**
 * undici's connector for every outbound connection of the sender: direct without a proxy, and
 * with EGRESS_PROXY_URL through the proxy's CONNECT tunnel, for http and https targets alike
 * (docs/operations.md#egress-proxy). Hookline still decides where a connection goes: `lookup`
 * (the URL policy's) resolves and checks the target's name here, and the proxy is asked to connect
 * to the checked address (`CONNECT 203.0.113.7:443`), never to the name, so a name that resolves
 * to a refused address never reaches the proxy. TLS runs inside the tunnel, end to end, with the
 * original host name for SNI and the certificate check.
 */
export function egressConnector(
  proxy: EgressProxy | undefined,
  urlPolicy: Pick<UrlPolicy, 'selfConnectionError'>,
  options: buildConnector.BuildOptions & { lookup: LookupFunction; timeout: number },
): buildConnector.connector {
  const direct = buildConnector(options);
  if (!proxy) return direct;
  return (target, callback) => {
    const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
    options.lookup(target.hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, null);
      const [{ address }] = addresses as Array<{ address: string }>;
      // The proxy's own address is what the socket sees, so this service's own is compared here.
      const self = urlPolicy.selfConnectionError(target.hostname, address, port);
      if (self) return callback(self, null);
      openTunnel(proxy, address, port, target.hostname, options.timeout, (tunnelError, socket) => {
        if (tunnelError) return callback(tunnelError, null);
        if (target.protocol !== 'https:') return callback(null, socket!);
        // TLS over the tunnel, named as the URL names the host (SNI and the certificate's name).
        direct({ ...target, httpSocket: socket! }, callback);
      });
    });
  };
}

/**
 * Opens a TCP connection to the proxy and asks it for a tunnel to `address`:`port`
 * (RFC 9110 §9.3.6). Calls back once: with the socket, ready for the target's bytes, or with an
 * {@link EgressProxyError}.
 */
export function openTunnel(
  proxy: EgressProxy,
  address: string,
  port: number,
  hostname: string,
  timeoutMs: number,
  callback: (error: Error | null, socket?: Socket) => void,
): void {
  const authority = `${isIPv6(address) ? `[${address}]` : address}:${port}`;
  const socket = netConnect({ host: proxy.host, port: proxy.port });
  let answered = false;
  let received = Buffer.alloc(0);
  const finish = (error: Error | null): void => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    socket.off('readable', onReadable).off('error', onError).off('close', onClose);
    if (error) {
      socket.destroy();
      callback(error);
    } else {
      callback(null, socket);
    }
  };
  const unreachable = (why: string): EgressProxyError => new EgressProxyError(`egress proxy unreachable: ${why} (${proxy.origin})`);
  const timer = setTimeout(() => finish(unreachable(`no tunnel to ${authority} within ${timeoutMs} ms`)), timeoutMs);
  const onError = (error: NodeJS.ErrnoException): void =>
    finish(unreachable(error.code ? `${error.code} ${error.message}` : error.message));
  const onClose = (): void => finish(unreachable(`it closed the connection before answering CONNECT ${authority}`));
  // Read in paused mode ('readable'), as undici reads its sockets: nothing flows to no one once this handler is gone.
  const onReadable = (): void => {
    let chunk: Buffer | null;
    while (!answered && (chunk = socket.read() as Buffer | null) !== null) answer(chunk);
  };
  const answer = (chunk: Buffer): void => {
    received = Buffer.concat([received, chunk]);
    const end = received.indexOf('\r\n\r\n');
    if (end === -1) {
      if (received.length > MAX_ANSWER_BYTES) finish(new EgressProxyError(`egress proxy sent no valid answer to CONNECT ${authority}`));
      return;
    }
    const statusLine = received.subarray(0, received.indexOf('\r\n')).toString('latin1');
    const status = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
    if (!status) return finish(new EgressProxyError(`egress proxy sent no valid answer to CONNECT ${authority}`));
    if (status[1][0] !== '2') {
      return finish(
        new EgressProxyError(
          `egress proxy refused CONNECT ${authority} (for ${hostname}): ${status[1]} ${(status[2] ?? '').slice(0, 100)}`.trim(),
        ),
      );
    }
    socket.setNoDelay(true).setKeepAlive(true, 60_000);
    finish(null);
    // Bytes past the answer are the target's already: back onto the socket for whoever reads next.
    const rest = received.subarray(end + 4);
    if (rest.length > 0) socket.unshift(rest);
  };
  socket.on('readable', onReadable).on('error', onError).on('close', onClose);
  socket.once('connect', () => {
    const authorization = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : '';
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${authorization}\r\n`);
  });
}
