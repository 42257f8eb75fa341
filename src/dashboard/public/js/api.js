// The public REST API, and nothing else: every call carries the signed-in key as
// X-API-Key. The key lives in sessionStorage, so it is gone when the tab closes.

const BASE = '/api/v1/external';
const STORAGE_KEY = 'hookline.apiKey';

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

let unauthorized = () => {};

/** Called when a request of a signed-in session gets a 401: the key was revoked meanwhile. */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

export const session = {
  get key() {
    return sessionStorage.getItem(STORAGE_KEY);
  },
  /** What the key may do and whose it is, found at sign-in ({read, write, name, storeId}). */
  caps: { read: false, write: false },
  start(key, caps) {
    sessionStorage.setItem(STORAGE_KEY, key);
    this.caps = caps;
  },
  end() {
    sessionStorage.removeItem(STORAGE_KEY);
    this.caps = { read: false, write: false };
    eventTypesCache = undefined;
  },
};

async function request(method, path, { body, query, key = session.key, signal } = {}) {
  const url = new URL(BASE + path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { Accept: 'application/json', 'X-API-Key': key ?? '' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
    });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError(0, 'Hookline could not be reached. Check that it is running and try again.');
  }
  if (response.status === 204) return null;
  const payload = await response.json().catch(() => null);
  if (response.ok) return payload;
  const message = Array.isArray(payload?.message) ? payload.message.join('; ') : (payload?.message ?? response.statusText);
  const error = new ApiError(response.status, message, payload);
  if (response.status === 401 && key === session.key && key) unauthorized(error);
  throw error;
}

/**
 * What a key may do, from GET /me, which answers any valid key with its scopes: nothing is tried
 * and refused on the way, so signing in leaves no error in the console or the server's log. A
 * 401 (unknown or revoked key) is thrown.
 */
export async function identify(key) {
  const me = await request('GET', '/me', { key });
  return { read: me.scopes.includes('webhooks:read'), write: me.scopes.includes('webhooks:write'), name: me.name, storeId: me.storeId };
}

let eventTypesCache;

export const api = {
  listWebhooks: (query, signal) => request('GET', '/webhooks', { query, signal }),
  getWebhook: (id, signal) => request('GET', `/webhooks/${encodeURIComponent(id)}`, { signal }),
  createWebhook: (body) => request('POST', '/webhooks', { body }),
  updateWebhook: (id, body) => request('PUT', `/webhooks/${encodeURIComponent(id)}`, { body }),
  deleteWebhook: (id) => request('DELETE', `/webhooks/${encodeURIComponent(id)}`),
  testWebhook: (id) => request('POST', `/webhooks/${encodeURIComponent(id)}/test`),
  rotateSecret: (id, oldSecretExpiresInSeconds) =>
    request('POST', `/webhooks/${encodeURIComponent(id)}/rotate-secret`, { body: { oldSecretExpiresInSeconds } }),
  listDeliveries: (id, query, signal) => request('GET', `/webhooks/${encodeURIComponent(id)}/deliveries`, { query, signal }),
  retryFailed: (id, since) =>
    request('POST', `/webhooks/${encodeURIComponent(id)}/deliveries/retry-failed`, { body: since ? { since } : {} }),
  replay: (id, window) => request('POST', `/webhooks/${encodeURIComponent(id)}/replay`, { body: window }),
  getDelivery: (id, signal) => request('GET', `/deliveries/${encodeURIComponent(id)}`, { signal }),
  retryDelivery: (id) => request('POST', `/deliveries/${encodeURIComponent(id)}/retry`),
  /** The catalogue does not change while the server runs: fetched once per session. */
  eventTypes() {
    eventTypesCache ??= request('GET', '/event-types').then((page) => page.data);
    eventTypesCache.catch(() => (eventTypesCache = undefined));
    return eventTypesCache;
  },
};

/** The scope named in a 403's message ("… lacks the scope webhooks:write"), or the fallback. */
function missingScope(error, fallback) {
  return /scope ([\w:-]+)/.exec(error.message)?.[1] ?? fallback;
}

/**
 * A sentence for the person at the screen. `action` completes "this key cannot …" (e.g.
 * "create endpoints"); `scope` is the scope that action needs.
 */
export function explain(error, action, scope) {
  if (error?.name === 'AbortError') return '';
  if (!(error instanceof ApiError)) return `Something went wrong in the page: ${error?.message ?? error}`;
  switch (error.status) {
    case 0:
      return error.message;
    case 401:
      return 'This API key was not accepted: it is unknown or has been revoked.';
    case 403:
      return `This key cannot ${action} (needs ${missingScope(error, scope)}).`;
    case 404:
      return `Not found: ${error.message}. It may have been deleted.`;
    case 429:
      return 'Too many requests: Hookline asked to slow down. Try again in a moment.';
    default:
      return error.status >= 500 ? `Hookline failed to ${action} (HTTP ${error.status}): ${error.message}` : error.message;
  }
}
