/** The forward proxy every outbound request leaves through (EGRESS_PROXY_URL; docs/operations.md#egress-proxy). */
export interface EgressProxy {
  /** `http://host:port`, without credentials: safe to log and to put in an error. */
  origin: string;
  host: string;
  port: number;
  /** `Basic …` from the URL's user and password, sent as Proxy-Authorization; never logged. */
  authorization?: string;
}

/**
 * EGRESS_PROXY_URL: `http://[user:password@]host[:port]`, the port defaulting to 80. Only an HTTP
 * proxy (the tunnel to an https receiver is TLS end to end inside it); no path, query or fragment,
 * which a forward proxy would have no use for. The message never repeats the URL: it may hold a
 * password.
 */
export function parseEgressProxy(text: string | undefined): { proxy?: EgressProxy; problems: string[] } {
  if (text === undefined || text.trim() === '') return { problems: [] };
  const refusal = (why: string) => ({
    problems: [`EGRESS_PROXY_URL must be the http:// URL of a forward proxy, such as http://proxy.internal:3128 (${why})`],
  });
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return refusal('it is not a URL');
  }
  if (url.protocol === 'https:') return refusal('https:// proxies are not supported; https receivers are reached through a CONNECT tunnel');
  if (url.protocol !== 'http:') return refusal(`the scheme is ${url.protocol.slice(0, 20)}`);
  if (url.hostname === '') return refusal('it has no host');
  if (url.pathname !== '/' || url.search || url.hash) return refusal('it must not have a path, query or fragment');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? 80 : Number(url.port);
  let authorization: string | undefined;
  if (url.username || url.password) {
    try {
      authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    } catch {
      return refusal('its user or password is not valid percent-encoding');
    }
  }
  return { proxy: { origin: `http://${url.host}`, host, port, authorization }, problems: [] };
}
