/** The header and cookie a browser's portal session is sent with (docs/api.md#portal-links). */
export const PORTAL_SESSION_HEADER = 'x-portal-session';
export const CSRF_HEADER = 'x-csrf-token';
export const PORTAL_COOKIE_PREFIX = 'hookline_portal_';

/** Longer than any credential Hookline makes: not worth a hash and a query. */
const MAX_CREDENTIAL_LENGTH = 512;
const SESSION_ID = /^ps_[0-9a-z]{26}$/;

/** What a request authenticates with. */
export type Credential =
  | { kind: 'none' }
  | { kind: 'api-key'; key: string }
  | { kind: 'bearer'; token: string }
  /** A browser's portal session: the session named by X-Portal-Session, and its cookie's value if the browser sent one. */
  | { kind: 'cookie'; sessionId: string; secret: string | undefined };

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The request's credential, in this order: `X-API-Key`; `Authorization: Bearer` (a portal
 * session's token; another scheme, such as a proxy's Basic, is not Hookline's and is ignored);
 * `X-Portal-Session` with that session's cookie. Text too long to be a credential counts as a
 * wrong one, not as none.
 */
export function credentialOf(headers: Headers): Credential {
  const key = header(headers, 'x-api-key');
  if (key) return { kind: 'api-key', key: key.length <= MAX_CREDENTIAL_LENGTH ? key : '' };
  const bearer = /^Bearer +(\S+) *$/i.exec(header(headers, 'authorization') ?? '');
  if (bearer) return { kind: 'bearer', token: bearer[1].length <= MAX_CREDENTIAL_LENGTH ? bearer[1] : '' };
  const sessionId = header(headers, PORTAL_SESSION_HEADER)?.trim();
  if (sessionId) {
    if (!SESSION_ID.test(sessionId)) return { kind: 'cookie', sessionId: '', secret: undefined };
    return { kind: 'cookie', sessionId, secret: cookieValue(header(headers, 'cookie'), `${PORTAL_COOKIE_PREFIX}${sessionId}`) };
  }
  return { kind: 'none' };
}

/** The value of cookie `name` in a Cookie header (RFC 6265 §5.4: `name=value` pairs split by `; `). */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  for (const pair of cookieHeader.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    const value = pair.slice(at + 1).trim();
    return value.length > 0 && value.length <= MAX_CREDENTIAL_LENGTH ? value : undefined;
  }
  return undefined;
}
