// The public REST API, and nothing else: every call carries the signed-in key as
// X-API-Key, or, for a portal session opened from a link, names the session in X-Portal-Session
// (its HttpOnly cookie goes with the request) and carries its CSRF token when it changes
// something. Both live in sessionStorage, so they are gone when the tab closes.

// The API's answers as the dashboard reads them: the server's response DTOs (src/*/dto).

/** @typedef {'manual' | 'gone' | 'failing'} DisabledReason */

/**
 * An endpoint (WebhookResponse).
 * @typedef {object} Webhook
 * @property {string} id
 * @property {string} name
 * @property {string} url
 * @property {string[]} events
 * @property {string | null} filter The content filter: only events it matches are sent; null for every event of its types.
 * @property {boolean} isActive
 * @property {Record<string, string | null>} headers A sensitive header's value reads null: it is never returned.
 * @property {string[]} sensitiveHeaders The names whose values are kept secret (stored encrypted, never returned).
 * @property {number[] | null} retrySchedule
 * @property {number | null} rateLimitPerSecond
 * @property {boolean} ordered
 * @property {ShownAuth | null} auth How Hookline authenticates to the receiver, without its secret part.
 * @property {{ clientCertificate: Certificate, ca: Certificate[] | null } | null} tls The client certificate of mutual TLS, summarised.
 * @property {DisabledReason | null} disabledReason
 * @property {string | null} disabledAt
 * @property {{ oldSecretExpiresAt: string } | null} secretRotation
 * @property {string} createdAt
 * @property {string} updatedAt
 */

/** @typedef {Webhook & { secret: string }} WebhookWithSecret Create and rotate-secret: the secret, shown once. */

/**
 * What a create or an update sends (an update may send any part of it).
 * @typedef {object} WebhookBody
 * @property {string} [name]
 * @property {string} [url]
 * @property {string[]} [events]
 * @property {string | null} [filter] Null clears it.
 * @property {boolean} [isActive]
 * @property {Record<string, string | null>} [headers] On an update, a sensitive header given null keeps its stored value.
 * @property {number[] | null} [retrySchedule]
 * @property {number | null} [rateLimitPerSecond]
 * @property {boolean} [ordered]
 * @property {ReceiverAuth | null} [auth] Replaces the whole setting; null removes it.
 */

/**
 * An endpoint's auth as the API shows it: the method and its non-secret fields.
 * @typedef {{ type: 'basic', username: string } | { type: 'bearer' }
 *   | { type: 'oauth2', tokenUrl: string, clientId: string, scope: string | null, audience: string | null }} ShownAuth
 */

/**
 * Auth as the form sets it (basic and bearer; OAuth2 is set through the API).
 * @typedef {{ type: 'basic', username: string, password: string } | { type: 'bearer', token: string }} ReceiverAuth
 */

/**
 * A certificate summarised.
 * @typedef {{ subject: string, issuer: string, fingerprint: string, validFrom: string, validTo: string }} Certificate
 */

/** @typedef {'pending' | 'succeeded' | 'failed'} DeliveryStatus */

/**
 * A delivery as lists show it (DeliveryResponse).
 * @typedef {object} Delivery
 * @property {string} id
 * @property {string} eventId
 * @property {string} webhookId
 * @property {string} eventType
 * @property {DeliveryStatus} status
 * @property {number} attemptCount
 * @property {string | null} nextAttemptAt
 * @property {number | null} lastStatusCode
 * @property {string | null} lastError
 * @property {number | null} lastDurationMs How long the last attempt took; null before the first.
 * @property {string} createdAt
 * @property {string} updatedAt
 */

/**
 * @typedef {object} Attempt
 * @property {number} number
 * @property {'manual' | 'scheduled'} trigger
 * @property {string} startedAt
 * @property {number} durationMs
 * @property {number | null} statusCode
 * @property {string | null} error
 * @property {string | null} responseBody
 */

/**
 * One delivery with its event and attempts (DeliveryDetailResponse).
 * @typedef {Delivery & { event: { id: string, type: string, timestamp: string, data: Record<string, unknown> }, attempts: Attempt[] }} DeliveryDetail
 */

/**
 * One event with its deliveries (EventResponse).
 * @typedef {{ id: string, type: string, timestamp: string, data: Record<string, unknown>, deliveries: Delivery[] }} EventDetail
 */

/**
 * A property of a `data` shape, in JSON Schema (2020-12): a nullable one has a type list with "null".
 * @typedef {object} PropertySchema
 * @property {string | string[]} type
 * @property {string} description
 * @property {string[]} [enum]
 * @property {string} [format]
 * @property {string} [pattern]
 * @property {number} [maxLength]
 * @property {number} [minimum]
 * @property {number} [minItems]
 * @property {number} [maxItems]
 * @property {ShapeSchema} [items]
 */

/**
 * A `data` shape, a JSON Schema (2020-12) object; an array's items may be plain values, with a type and no properties.
 * @typedef {object} ShapeSchema
 * @property {string} type
 * @property {Record<string, PropertySchema>} [properties]
 * @property {string[]} [required]
 */

/**
 * One type of the event catalogue (EventTypeResponse).
 * @typedef {object} EventType
 * @property {string} type
 * @property {string} category
 * @property {string} description
 * @property {Record<string, unknown>} example
 * @property {ShapeSchema} schema
 */

/**
 * @typedef {object} TestResult
 * @property {boolean} success
 * @property {number | null} statusCode
 * @property {number} durationMs
 * @property {string | null} error
 * @property {string} eventId
 * @property {string} deliveryId
 */

/**
 * @template T
 * @typedef {{ data: T[], nextCursor: string | null }} Page
 */

/**
 * What a replay or a retry-failed request queued (ReplayResponse, RetryFailedResponse). Each queues
 * at most MAX_REPLAY_DELIVERIES: `next`, when present, is the `since` of the request that goes on.
 * @typedef {{ queued: number, next?: string }} QueuedBatch
 */

/**
 * How a portal session's dashboard presents itself (PortalBrandingResponse).
 * @typedef {{ name?: string, accentColor?: string, logoUrl?: string }} Branding
 */

/**
 * A portal session this tab is signed in to (PortalSessionResponse).
 * @typedef {object} PortalSession
 * @property {string} id
 * @property {string} storeId
 * @property {string[]} capabilities
 * @property {string[] | null} webhookIds The only endpoints it may see; null: all of the store's.
 * @property {Branding} branding
 * @property {string} expiresAt
 * @property {string} [csrfToken]
 */

/**
 * What the signed-in key or portal session may do and whose it is.
 * @typedef {{ read: boolean, write: boolean, name?: string, storeId?: string, portal?: PortalSession }} Caps
 */

/** @typedef {Record<string, string | number | null | undefined>} Query */

const BASE = '/api/v1/external';
const STORAGE_KEY = 'hookline.apiKey';
const PORTAL_STORAGE_KEY = 'hookline.portal';

export class ApiError extends Error {
  /**
   * @param {number} status The HTTP status; 0 when Hookline could not be reached.
   * @param {string} message
   * @param {unknown} [body]
   */
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** @type {(error: ApiError) => void} */
let unauthorized = () => {};

/**
 * Called when a request of a signed-in session gets a 401: the key was revoked meanwhile.
 * @param {(error: ApiError) => void} handler
 */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

export const session = {
  get key() {
    return sessionStorage.getItem(STORAGE_KEY);
  },
  /**
   * The portal session this tab signed in to with a link, if any: its id and CSRF token.
   * @returns {{ id: string, csrfToken: string, expiresAt: string, brandName?: string } | null}
   */
  get portal() {
    const stored = sessionStorage.getItem(PORTAL_STORAGE_KEY);
    return stored ? JSON.parse(stored) : null;
  },
  /** Whether this tab is signed in, by a key or by a portal link. */
  get active() {
    return Boolean(this.key || this.portal);
  },
  /** What the key may do and whose it is, found at sign-in ({read, write, name, storeId}). */
  /** @type {Caps} */
  caps: { read: false, write: false },
  /**
   * @param {string} key
   * @param {Caps} caps
   */
  start(key, caps) {
    sessionStorage.setItem(STORAGE_KEY, key);
    this.caps = caps;
  },
  /** @param {PortalSession & { csrfToken: string }} portal */
  startPortal(portal) {
    sessionStorage.removeItem(STORAGE_KEY);
    const stored = { id: portal.id, csrfToken: portal.csrfToken, expiresAt: portal.expiresAt, brandName: portal.branding.name };
    sessionStorage.setItem(PORTAL_STORAGE_KEY, JSON.stringify(stored));
    this.caps = capsOfPortal(portal);
  },
  end() {
    sessionStorage.removeItem(STORAGE_KEY);
    sessionStorage.removeItem(PORTAL_STORAGE_KEY);
    this.caps = { read: false, write: false };
    eventTypesCache = undefined;
  },
};

/**
 * What a portal session may do: read always, write with `manage`.
 * @param {PortalSession} portal
 * @returns {Caps}
 */
function capsOfPortal(portal) {
  return { read: true, write: portal.capabilities.includes('manage'), name: portal.branding.name, storeId: portal.storeId, portal };
}

/**
 * @param {string} method
 * @param {string} path
 * @param {{ body?: unknown, query?: Query, key?: string | null, signal?: AbortSignal }} [options]
 * @returns {Promise<any>} The answer's JSON (the callers say of which type), or null for a 204.
 */
async function request(method, path, { body, query, key = session.key, signal } = {}) {
  const url = new URL(BASE + path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  const portal = key === session.key ? session.portal : null;
  if (portal) {
    headers['X-Portal-Session'] = portal.id;
    if (method !== 'GET') headers['X-CSRF-Token'] = portal.csrfToken;
  } else if (key) {
    headers['X-API-Key'] = key;
  }
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
    if (isAbort(error)) throw error;
    throw new ApiError(0, 'Hookline could not be reached. Check that it is running and try again.');
  }
  if (response.status === 204) return null;
  const payload = await response.json().catch(() => null);
  if (response.ok) return payload;
  const message = Array.isArray(payload?.message) ? payload.message.join('; ') : (payload?.message ?? response.statusText);
  const error = new ApiError(response.status, message, payload);
  if (response.status === 401 && key === session.key && (key || portal)) unauthorized(error);
  throw error;
}

/**
 * What a key may do, from GET /me, which answers any valid key with its scopes: nothing is tried
 * and refused on the way, so signing in leaves no error in the console or the server's log. A
 * 401 (unknown or revoked key) is thrown.
 * @param {string} key
 * @returns {Promise<Caps>}
 */
export async function identify(key) {
  /** @type {{ name: string, storeId: string, scopes: string[] }} */
  const me = await request('GET', '/me', { key });
  return { read: me.scopes.includes('webhooks:read'), write: me.scopes.includes('webhooks:write'), name: me.name, storeId: me.storeId };
}

/**
 * Spends a portal link's one-time code: the answer sets the session's HttpOnly cookie and gives
 * the session with its CSRF token. A used, expired or ended link is refused (401) with the reason.
 * @param {string} code
 * @returns {Promise<PortalSession & { csrfToken: string }>}
 */
export function exchangePortalCode(code) {
  return request('POST', '/portal-sessions/exchange', { body: { code }, key: null });
}

/**
 * What the portal session of this tab may do, asked again after a reload (GET /me); a 401 (ended
 * or expired) is thrown.
 * @returns {Promise<Caps>}
 */
export async function identifyPortal() {
  /** @type {{ portalSession: PortalSession }} */
  const me = await request('GET', '/me');
  return capsOfPortal(me.portalSession);
}

/**
 * The note of a session that can only read: `cannot` completes "it cannot …". A key is told the
 * scope it lacks; a portal session, whose capabilities the platform chose, is not.
 * @param {string} cannot
 */
export function readOnlyText(cannot) {
  return session.caps.portal
    ? `This session can only read: it cannot ${cannot}.`
    : `This key can only read: it cannot ${cannot} (needs webhooks:write).`;
}

/** @type {Promise<EventType[]> | undefined} */
let eventTypesCache;

export const api = {
  /** @type {(query: Query, signal?: AbortSignal) => Promise<Page<Webhook>>} */
  listWebhooks: (query, signal) => request('GET', '/webhooks', { query, signal }),
  /** @type {(id: string, signal?: AbortSignal) => Promise<Webhook>} */
  getWebhook: (id, signal) => request('GET', `/webhooks/${encodeURIComponent(id)}`, { signal }),
  /** @type {(body: WebhookBody) => Promise<WebhookWithSecret>} */
  createWebhook: (body) => request('POST', '/webhooks', { body }),
  /** @type {(id: string, body: WebhookBody) => Promise<Webhook>} */
  updateWebhook: (id, body) => request('PUT', `/webhooks/${encodeURIComponent(id)}`, { body }),
  /** @type {(id: string) => Promise<null>} */
  deleteWebhook: (id) => request('DELETE', `/webhooks/${encodeURIComponent(id)}`),
  /** @type {(filter: string, event: Record<string, unknown>) => Promise<{ matches: boolean }>} */
  testFilter: (filter, event) => request('POST', '/webhooks/filter-test', { body: { filter, event } }),
  /** @type {(id: string) => Promise<TestResult>} */
  testWebhook: (id) => request('POST', `/webhooks/${encodeURIComponent(id)}/test`),
  /** @type {(id: string, oldSecretExpiresInSeconds: number) => Promise<WebhookWithSecret>} */
  rotateSecret: (id, oldSecretExpiresInSeconds) =>
    request('POST', `/webhooks/${encodeURIComponent(id)}/rotate-secret`, { body: { oldSecretExpiresInSeconds } }),
  /** @type {(id: string, query: Query, signal?: AbortSignal) => Promise<Page<Delivery>>} */
  listDeliveries: (id, query, signal) => request('GET', `/webhooks/${encodeURIComponent(id)}/deliveries`, { query, signal }),
  /** @type {(id: string, since?: string) => Promise<QueuedBatch>} */
  retryFailed: (id, since) =>
    request('POST', `/webhooks/${encodeURIComponent(id)}/deliveries/retry-failed`, { body: since ? { since } : {} }),
  /** @type {(id: string, window: { since: string, until?: string }) => Promise<QueuedBatch>} */
  replay: (id, window) => request('POST', `/webhooks/${encodeURIComponent(id)}/replay`, { body: window }),
  /** @type {(id: string, signal?: AbortSignal) => Promise<DeliveryDetail>} */
  getDelivery: (id, signal) => request('GET', `/deliveries/${encodeURIComponent(id)}`, { signal }),
  /** @type {(id: string, signal?: AbortSignal) => Promise<EventDetail>} */
  getEvent: (id, signal) => request('GET', `/events/${encodeURIComponent(id)}`, { signal }),
  /** @type {(id: string) => Promise<Delivery>} */
  retryDelivery: (id) => request('POST', `/deliveries/${encodeURIComponent(id)}/retry`),
  /**
   * The catalogue does not change while the server runs: fetched once per session.
   * @returns {Promise<EventType[]>}
   */
  eventTypes() {
    eventTypesCache ??= request('GET', '/event-types').then((page) => page.data);
    eventTypesCache.catch(() => (eventTypesCache = undefined));
    return eventTypesCache;
  },
};

/**
 * Whether a request ended because its view went away (its signal aborted), not because it failed.
 * @param {unknown} error
 * @returns {error is Error}
 */
export function isAbort(error) {
  return error instanceof Error && error.name === 'AbortError';
}

/**
 * The scope named in a 403's message ("… lacks the scope webhooks:write"), or the fallback.
 * @param {ApiError} error
 * @param {string} fallback
 */
function missingScope(error, fallback) {
  return /scope ([\w:-]+)/.exec(error.message)?.[1] ?? fallback;
}

/**
 * A sentence for the person at the screen. `action` completes "this key cannot …" (e.g.
 * "create endpoints"); `scope` is the scope that action needs.
 * @param {unknown} error Whatever was thrown.
 * @param {string} action
 * @param {string} scope
 * @returns {string}
 */
export function explain(error, action, scope) {
  if (isAbort(error)) return '';
  if (!(error instanceof ApiError)) return `Something went wrong in the page: ${error instanceof Error ? error.message : String(error)}`;
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

/**
 * A sentence for a replay or retry-failed request that failed: those of an endpoint run one at a
 * time (409 while another runs) and under a time limit (503 when past it, with nothing queued).
 * @param {unknown} error
 * @param {string} action Completes "this key cannot …".
 */
export function explainQueuing(error, action) {
  if (error instanceof ApiError && error.status === 409 && /already running/.test(error.message))
    return 'A replay or retry of this endpoint’s deliveries is already running; try again when it finishes.';
  if (error instanceof ApiError && error.status === 503 && /cancelled/.test(error.message))
    return 'It took too long and was stopped: nothing was queued. Try again in a moment.';
  return explain(error, action, 'webhooks:write');
}
