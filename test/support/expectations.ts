import { STATUS_CODES } from 'node:http';
import type { TestApp } from './app';
import type { TestDatabase } from './database';

/** ISO 8601 UTC with milliseconds. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** `whsec_` and at least 32 random bytes in base64url. */
/** `whsec_` and 32 bytes in standard base64. */
export const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

export function idOf(prefix: 'st' | 'wh' | 'evt' | 'del' | 'key'): RegExp {
  return new RegExp(`^${prefix}_[0-9a-z]{26}$`);
}

/** Every table the API writes to. */
export const TABLES = ['stores', 'api_keys', 'webhooks', 'events', 'idempotency_keys', 'deliveries', 'delivery_attempts'] as const;

/** Row counts of every table, to show that a refused request stored nothing. */
export async function rowCounts(db: TestDatabase): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const [{ count }] = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`);
    counts[table] = count;
  }
  return counts;
}

/** How many rows of any table hold `text` in any column. */
export async function rowsContaining(db: TestDatabase, text: string): Promise<number> {
  let total = 0;
  for (const table of [...TABLES, 'settings']) {
    const [{ count }] = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table} t WHERE strpos(t::text, $1) > 0`, [
      text,
    ]);
    total += count;
  }
  return total;
}

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string | string[];
}

/**
 * Asserts the response is `status` in the one error shape and returns the body.
 * `message`: the exact text, or an entry the message array must contain.
 */
export async function expectError(res: Response, status: number, message?: string | RegExp): Promise<ErrorBody> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toEqual({ status, body: expect.any(String) });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as ErrorBody;
  expect(body).toEqual({ statusCode: status, error: STATUS_CODES[status], message: expect.anything() });
  expect(text).not.toMatch(/<html|\bat .+\.(js|ts):\d+/i);
  if (message instanceof RegExp) {
    const messages = Array.isArray(body.message) ? body.message : [body.message];
    expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
  } else if (message !== undefined) {
    if (Array.isArray(body.message)) expect(body.message).toContain(message);
    else expect(body.message).toBe(message);
  }
  return body;
}

/** The JSON body of a response that must have `status`. */
export async function expectJson<T = Record<string, unknown>>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toEqual({ status, body: expect.any(String) });
  return JSON.parse(text) as T;
}

export interface WebhookBody {
  id: string;
  name: string;
  url: string;
  events: string[];
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  secret?: string;
}

export interface CreatedKey {
  id: string;
  name: string;
  scopes: string[];
  storeId: string;
  key: string;
  createdAt: string;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** Registers a webhook (201 expected) with `key` (the admin key by default). */
export async function createWebhook(t: TestApp, body: Record<string, unknown>, key?: string): Promise<WebhookBody> {
  const json = { name: 'endpoint', url: 'https://hooks.example.com/in', events: ['order.created'], ...body };
  return expectJson<WebhookBody>(await t.api('/webhooks', { method: 'POST', json, key }), 201);
}

/** Creates a store and a key in it holding `scopes`, through the API (POST /stores, POST /stores/:id/api-keys). */
export async function createStoreWithKey(t: TestApp, name: string, scopes: string[]): Promise<{ storeId: string; key: CreatedKey }> {
  const store = await expectJson<{ id: string }>(await t.api('/stores', { method: 'POST', json: { name } }), 201);
  const key = await expectJson<CreatedKey>(
    await t.api(`/stores/${store.id}/api-keys`, { method: 'POST', json: { name: `${name} key`, scopes } }),
    201,
  );
  return { storeId: store.id, key };
}

/** Follows `nextCursor` from `path` (which may already carry a query) to the last page. */
export async function allPages<T>(
  t: TestApp,
  path: string,
  key?: string,
  startCursor: string | null = null,
): Promise<{ pages: T[][]; cursors: Array<string | null> }> {
  const pages: T[][] = [];
  const cursors: Array<string | null> = [];
  let cursor: string | null = startCursor;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const url: string = cursor === null ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`;
    const page: Page<T> = await expectJson<Page<T>>(await t.api(url, { key }), 200);
    expect(Object.keys(page).sort()).toEqual(['data', 'nextCursor']);
    pages.push(page.data);
    cursors.push(page.nextCursor);
    cursor = page.nextCursor;
    if (pages.length > 100) throw new Error(`paging ${path} does not end`);
  } while (cursor !== null);
  return { pages, cursors };
}

/** A fake DNS for the URL policy (URL_RESOLVER): names map to addresses; anything else does not resolve. */
export function fakeResolver(answers: Record<string, string[]>): jest.Mock<Promise<Array<{ address: string; family: 4 | 6 }>>, [string]> {
  return jest.fn(async (hostname: string) => {
    const found = answers[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  });
}
