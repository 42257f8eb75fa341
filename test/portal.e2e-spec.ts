import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHooklineClient, unwrap } from '@hookline/client';
import type { Browser, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { ADMIN_KEY, startApp, type TestApp } from './support/app';
import {
  createStoreWithKey,
  createWebhook,
  expectError,
  expectJson,
  rowCounts,
  rowsContaining,
  type CreatedKey,
  type Page as ListPage,
  type WebhookBody,
} from './support/expectations';
import { launchChromium } from './support/browser';
import { eventually } from './support/eventually';

/**
 * Portal links: sessions of one store's dashboard, opened without an API key (a link's one-time
 * code for a browser cookie) or used from the platform's code (a bearer token). First the API,
 * then the real dashboard in Chromium: signing in by link, read sessions, ended sessions, stores
 * kept apart, and framing by the origins of PORTAL_FRAME_ANCESTORS.
 */

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const HOOK_URL = 'http://127.0.0.1:9/hook';
const ORDER = { id: 'ord_1', orderNumber: 'ORD-1', status: 'PENDING', total: 100, currency: 'EUR' };

interface CreatedSession {
  id: string;
  url: string;
  token: string;
  expiresAt: string;
}

interface SessionInfo {
  id: string;
  storeId: string;
  capabilities: string[];
  webhookIds: string[] | null;
  branding: Record<string, string>;
  expiresAt: string;
  csrfToken?: string;
}

/** The one-time code of a session's link. */
function codeOf(session: CreatedSession): string {
  return new URL(session.url).hash.replace(/^#portal=/, '');
}

describe('portal links (API)', () => {
  let t: TestApp;
  /** Store A is st_default (the admin key's); store B is another. */
  let storeB: { storeId: string; key: CreatedKey };
  let portalKey: CreatedKey;
  let endpointsA: WebhookBody[];
  let endpointB: WebhookBody;

  async function createSession(body: Record<string, unknown>, key = portalKey.key, path = '/portal-sessions'): Promise<CreatedSession> {
    return expectJson<CreatedSession>(await t.api(path, { method: 'POST', json: body, key }), 201);
  }

  function bearer(token: string, path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
    return t.api(path, { ...init, key: null, headers: { ...(init.headers as Record<string, string>), Authorization: `Bearer ${token}` } });
  }

  async function exchange(code: string): Promise<Response> {
    return t.api('/portal-sessions/exchange', { method: 'POST', json: { code }, key: null });
  }

  /** Signs a "browser" in with the session's code: the cookie's value and the session with its CSRF token. */
  async function signIn(session: CreatedSession): Promise<{ cookie: string; info: SessionInfo }> {
    const res = await exchange(codeOf(session));
    const info = await expectJson<SessionInfo>(res, 200);
    const setCookie = res.headers.get('set-cookie')!;
    return { cookie: setCookie.split(';')[0], info };
  }

  function byCookie(
    sessionId: string,
    cookie: string,
    path: string,
    init: RequestInit & { json?: unknown; csrf?: string } = {},
  ): Promise<Response> {
    const { csrf, ...rest } = init;
    return t.api(path, {
      ...rest,
      key: null,
      headers: { 'X-Portal-Session': sessionId, Cookie: cookie, ...(csrf ? { 'X-CSRF-Token': csrf } : {}) },
    });
  }

  beforeAll(async () => {
    t = await startApp();
    storeB = await createStoreWithKey(t, 'Store B', ['webhooks:read', 'webhooks:write', 'portal:write']);
    portalKey = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: 'platform', scopes: ['portal:write', 'webhooks:read', 'webhooks:write'] } }),
      201,
    );
    endpointsA = [];
    for (const name of ['one', 'two', 'three']) endpointsA.push(await createWebhook(t, { name, url: HOOK_URL }));
    endpointB = await createWebhook(t, { name: 'b-endpoint', url: HOOK_URL }, storeB.key.key);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('creates a session with a store key holding portal:write, in its store: a link, a token and the expiry, secrets kept only hashed', async () => {
    const before = Date.now();
    const session = await createSession({ capabilities: ['read'] });
    expect(session).toEqual({
      id: expect.stringMatching(/^ps_[0-9a-z]{26}$/),
      url: expect.stringMatching(/^http:\/\/localhost:3000\/dashboard#portal=[A-Za-z0-9_-]{43}$/),
      token: expect.stringMatching(/^hlp_[A-Za-z0-9_-]{43}$/),
      expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect(session.url.startsWith(`${t.config.publicUrl}/dashboard#portal=`)).toBe(true);
    const expiresIn = Date.parse(session.expiresAt) - before;
    expect(expiresIn).toBeGreaterThan(3_590_000);
    expect(expiresIn).toBeLessThan(3_610_000);

    const me = await expectJson<{ id: string; storeId: string; scopes: string[]; portalSession: SessionInfo }>(
      await bearer(session.token, '/me'),
      200,
    );
    expect(me).toMatchObject({ id: session.id, storeId: 'st_default', scopes: ['webhooks:read'] });
    expect(me.portalSession).toEqual({
      id: session.id,
      storeId: 'st_default',
      capabilities: ['read'],
      webhookIds: null,
      branding: {},
      expiresAt: session.expiresAt,
    });

    const [row] = await t.db.query<{ token_hash: string; code_hash: string }>(
      'SELECT token_hash, code_hash FROM portal_sessions WHERE id = $1',
      [session.id],
    );
    expect(row).toEqual({ token_hash: sha256(session.token), code_hash: sha256(codeOf(session)) });
    expect(await rowsContaining(t.db, session.token)).toBe(0);
    const [{ found }] = await t.db.query<{ found: number }>(
      `SELECT count(*)::int AS found FROM portal_sessions WHERE row_to_json(portal_sessions)::text LIKE '%' || $1 || '%' OR row_to_json(portal_sessions)::text LIKE '%' || $2 || '%'`,
      [session.token, codeOf(session)],
    );
    expect(found).toBe(0);
  });

  it('creates a session of any store as the platform administrator (stores:write), and says which store is unknown', async () => {
    const session = await createSession(
      { capabilities: ['read', 'manage'], expiresInSeconds: 60 },
      ADMIN_KEY,
      `/stores/${storeB.storeId}/portal-sessions`,
    );
    expect(Date.parse(session.expiresAt) - Date.now()).toBeLessThan(61_000);
    const me = await expectJson<{ storeId: string; scopes: string[] }>(await bearer(session.token, '/me'), 200);
    expect(me).toMatchObject({ storeId: storeB.storeId, scopes: ['webhooks:read', 'webhooks:write'] });
    await expectError(
      await t.api('/stores/st_00000000000000000000000000/portal-sessions', { method: 'POST', json: { capabilities: ['read'] } }),
      404,
      'Store st_00000000000000000000000000 not found',
    );
    await expectError(
      await t.api(`/stores/${storeB.storeId}/portal-sessions`, { method: 'POST', json: { capabilities: ['read'] }, key: portalKey.key }),
      403,
      'This API key lacks the scope stores:write',
    );
  });

  it('lets a key hand out only what it may do itself, and only with portal:write', async () => {
    const readOnly = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: 'read portal', scopes: ['portal:write', 'webhooks:read'] } }),
      201,
    );
    await createSession({ capabilities: ['read'] }, readOnly.key);
    await expectError(
      await t.api('/portal-sessions', { method: 'POST', json: { capabilities: ['read', 'manage'] }, key: readOnly.key }),
      403,
      'A key can grant only scopes it holds itself; this key lacks webhooks:write',
    );
    await expectError(
      await t.api('/portal-sessions', { method: 'POST', json: { capabilities: ['read'] }, key: storeB.key.key.replace(/.$/, 'x') }),
      401,
      'Invalid API key',
    );
    const noPortal = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: 'no portal', scopes: ['webhooks:read', 'webhooks:write'] } }),
      201,
    );
    await expectError(
      await t.api('/portal-sessions', { method: 'POST', json: { capabilities: ['read'] }, key: noPortal.key }),
      403,
      'This API key lacks the scope portal:write',
    );
  });

  it.each<[string, Record<string, unknown>, string | RegExp]>([
    ['an unknown capability', { capabilities: ['read', 'admin'] }, 'each capability must be one of: read, manage'],
    ['manage without read', { capabilities: ['manage'] }, 'capabilities must include read: ["read"] or ["read", "manage"]'],
    ['no capabilities', {}, /^capabilities /],
    [
      'a colour that is not #rrggbb',
      { capabilities: ['read'], branding: { accentColor: 'red' } },
      'branding.accentColor must be a colour written #rrggbb, e.g. #0a7d5a',
    ],
    [
      'an http:// logo',
      { capabilities: ['read'], branding: { logoUrl: 'http://cdn.example.com/logo.png' } },
      /^branding\.logoUrl must use https:\/\//,
    ],
    [
      'a logo that is no URL',
      { capabilities: ['read'], branding: { logoUrl: 'logo.png' } },
      'branding.logoUrl must be an absolute https:// URL',
    ],
    ['an unknown branding field', { capabilities: ['read'], branding: { colour: '#ffffff' } }, 'branding.property colour should not exist'],
    [
      'a name with a control character',
      { capabilities: ['read'], branding: { name: 'Acme\nOutdoor' } },
      /^branding\.name must not contain control characters/,
    ],
    ['an expiry under a minute', { capabilities: ['read'], expiresInSeconds: 59 }, 'expiresInSeconds must be an integer from 60 to 86400'],
    ['an expiry over a day', { capabilities: ['read'], expiresInSeconds: 86_401 }, 'expiresInSeconds must be an integer from 60 to 86400'],
    [
      'an expiry that is no integer',
      { capabilities: ['read'], expiresInSeconds: 90.5 },
      'expiresInSeconds must be an integer from 60 to 86400',
    ],
    [
      'an empty webhookIds',
      { capabilities: ['read'], webhookIds: [] },
      'webhookIds must name at least one endpoint (leave it out for all of them)',
    ],
    [
      'an unknown webhook id',
      { capabilities: ['read'], webhookIds: ['wh_00000000000000000000000000'] },
      'webhookIds: wh_00000000000000000000000000 is not an endpoint of store st_default',
    ],
  ])('refuses %s with a 400 naming the field, and stores nothing', async (_label, body, message) => {
    const [{ count }] = await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM portal_sessions');
    await expectError(await t.api('/portal-sessions', { method: 'POST', json: body, key: portalKey.key }), 400, message);
    expect((await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM portal_sessions'))[0].count).toBe(count);
  });

  it("refuses another store's endpoint in webhookIds, as it does an unknown id", async () => {
    await expectError(
      await t.api('/portal-sessions', {
        method: 'POST',
        json: { capabilities: ['read'], webhookIds: [endpointsA[0].id, endpointB.id] },
        key: portalKey.key,
      }),
      400,
      `webhookIds: ${endpointB.id} is not an endpoint of store st_default`,
    );
  });

  it("answers a read session's writes 403 and changes nothing; no session reaches API keys, stores, publishing or portal sessions", async () => {
    const read = await createSession({ capabilities: ['read'] });
    const list = await expectJson<ListPage<WebhookBody>>(await bearer(read.token, '/webhooks'), 200);
    expect(list.data.map((webhook) => webhook.id).sort()).toEqual(endpointsA.map((webhook) => webhook.id).sort());
    const before = await rowCounts(t.db);
    const webhookBefore = await t.db.query('SELECT * FROM webhooks WHERE id = $1', [endpointsA[0].id]);
    const lacksWrite = 'This portal session lacks the scope webhooks:write (its capabilities: read)';
    await expectError(
      await bearer(read.token, `/webhooks/${endpointsA[0].id}`, { method: 'PUT', json: { name: 'renamed' } }),
      403,
      lacksWrite,
    );
    await expectError(
      await bearer(read.token, '/webhooks', { method: 'POST', json: { name: 'x', url: HOOK_URL, events: ['order.created'] } }),
      403,
      lacksWrite,
    );
    await expectError(
      await bearer(read.token, `/webhooks/${endpointsA[0].id}/rotate-secret`, { method: 'POST', json: {} }),
      403,
      lacksWrite,
    );
    await expectError(await bearer(read.token, `/webhooks/${endpointsA[0].id}`, { method: 'DELETE' }), 403, lacksWrite);

    const manage = await createSession({ capabilities: ['read', 'manage'] });
    for (const [method, path, json, scope] of [
      ['GET', '/api-keys', undefined, 'api-keys:write'],
      ['POST', '/api-keys', { name: 'k', scopes: ['webhooks:read'] }, 'api-keys:write'],
      ['GET', '/stores', undefined, 'stores:write'],
      ['POST', '/portal-sessions', { capabilities: ['read'] }, 'portal:write'],
      ['DELETE', `/portal-sessions/${read.id}`, undefined, 'portal:write'],
      ['POST', '/events', { type: 'order.created', data: ORDER }, 'events:write'],
    ] as const) {
      await expectError(
        await bearer(manage.token, path, { method, json }),
        403,
        `This portal session lacks the scope ${scope} (its capabilities: read, manage)`,
      );
    }
    expect(await rowCounts(t.db)).toEqual(before);
    expect(await t.db.query('SELECT * FROM webhooks WHERE id = $1', [endpointsA[0].id])).toEqual(webhookBefore);

    const renamed = await expectJson<WebhookBody>(
      await bearer(manage.token, `/webhooks/${endpointsA[2].id}`, { method: 'PUT', json: { name: 'three (renamed)' } }),
      200,
    );
    expect(renamed.name).toBe('three (renamed)');
  });

  it('serves @hookline/client given a portal token, with the session’s capabilities', async () => {
    const session = await createSession({ capabilities: ['read'] });
    const hookline = createHooklineClient({ baseUrl: t.baseUrl, portalToken: session.token });
    const page = await unwrap(hookline.GET('/webhooks'));
    expect(page.data.map((webhook) => webhook.id).sort()).toEqual(endpointsA.map((webhook) => webhook.id).sort());
    const refused = await hookline.PUT('/webhooks/{id}', { params: { path: { id: endpointsA[0].id } }, body: { name: 'by client' } });
    expect(refused.response.status).toBe(403);
  });

  it('limits a session with webhookIds to those endpoints: lists, reads, writes, deliveries and events; it cannot create endpoints', async () => {
    const [one, two, three] = endpointsA;
    const limited = await createSession({ capabilities: ['read', 'manage'], webhookIds: [one.id, two.id] });

    const listed = await expectJson<ListPage<WebhookBody>>(await bearer(limited.token, '/webhooks'), 200);
    expect(listed).toEqual({ data: [expect.objectContaining({ id: two.id }), expect.objectContaining({ id: one.id })], nextCursor: null });
    const first = await expectJson<ListPage<WebhookBody>>(await bearer(limited.token, '/webhooks?limit=1'), 200);
    expect(first.data.map((webhook) => webhook.id)).toEqual([two.id]);
    const second = await expectJson<ListPage<WebhookBody>>(
      await bearer(limited.token, `/webhooks?limit=1&cursor=${first.nextCursor}`),
      200,
    );
    expect(second).toEqual({ data: [expect.objectContaining({ id: one.id })], nextCursor: null });

    await expectJson(await bearer(limited.token, `/webhooks/${one.id}`), 200);
    await expectJson(await bearer(limited.token, `/webhooks/${two.id}`, { method: 'PUT', json: { name: 'two (renamed)' } }), 200);
    for (const [method, path, json] of [
      ['GET', `/webhooks/${three.id}`, undefined],
      ['PUT', `/webhooks/${three.id}`, { name: 'not mine' }],
      ['DELETE', `/webhooks/${three.id}`, undefined],
      ['POST', `/webhooks/${three.id}/rotate-secret`, {}],
      ['POST', `/webhooks/${three.id}/test`, undefined],
      ['GET', `/webhooks/${three.id}/deliveries`, undefined],
      ['POST', `/webhooks/${three.id}/deliveries/retry-failed`, {}],
      ['POST', `/webhooks/${three.id}/replay`, { since: new Date(Date.now() - 60_000).toISOString() }],
      ['GET', `/webhooks/${endpointB.id}`, undefined],
    ] as const) {
      await expectError(await bearer(limited.token, path, { method, json }), 404, `Webhook ${path.split('/')[2]} not found`);
    }
    expect((await t.db.query<{ name: string }>('SELECT name FROM webhooks WHERE id = $1', [three.id]))[0].name).not.toBe('not mine');
    const [{ count }] = await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM webhooks');
    await expectError(
      await bearer(limited.token, '/webhooks', { method: 'POST', json: { name: 'new', url: HOOK_URL, events: ['order.created'] } }),
      403,
      'This portal session is limited to some endpoints (webhookIds): POST /webhooks is not open to it',
    );
    expect((await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM webhooks'))[0].count).toBe(count);

    // An event that reached all three, and one that reached three alone.
    const both = await expectJson<{ id: string }>(
      await t.api('/events', { method: 'POST', json: { type: 'order.created', data: ORDER } }),
      202,
    );
    for (const mine of [one, two]) await t.api(`/webhooks/${mine.id}`, { method: 'PUT', json: { isActive: false } });
    const onlyThree = await expectJson<{ id: string }>(
      await t.api('/events', { method: 'POST', json: { type: 'order.created', data: ORDER } }),
      202,
    );
    const deliveries = await t.db.query<{ id: string; webhook_id: string; event_id: string }>(
      'SELECT id, webhook_id, event_id FROM deliveries WHERE event_id = ANY ($1)',
      [[both.id, onlyThree.id]],
    );
    const toOne = deliveries.find((row) => row.webhook_id === one.id && row.event_id === both.id)!;
    const toThree = deliveries.find((row) => row.webhook_id === three.id && row.event_id === both.id)!;

    await expectJson(await bearer(limited.token, `/deliveries/${toOne.id}`), 200);
    await expectError(await bearer(limited.token, `/deliveries/${toThree.id}`), 404, `Delivery ${toThree.id} not found`);
    await expectError(
      await bearer(limited.token, `/deliveries/${toThree.id}/retry`, { method: 'POST' }),
      404,
      `Delivery ${toThree.id} not found`,
    );
    const event = await expectJson<{ deliveries: Array<{ webhookId: string }> }>(await bearer(limited.token, `/events/${both.id}`), 200);
    expect(event.deliveries.map((delivery) => delivery.webhookId).sort()).toEqual([one.id, two.id].sort());
    await expectError(await bearer(limited.token, `/events/${onlyThree.id}`), 404, `Event ${onlyThree.id} not found`);
    await expectJson(await bearer(limited.token, '/event-types'), 200);
    for (const mine of [one, two]) await t.api(`/webhooks/${mine.id}`, { method: 'PUT', json: { isActive: true } });
  });

  it('signs a browser in once with the link’s code: an HttpOnly cookie for the API, and a CSRF token for its writes', async () => {
    const session = await createSession({ capabilities: ['read', 'manage'], branding: { name: 'Acme Outdoor', accentColor: '#0A7D5A' } });
    const first = await exchange(codeOf(session));
    const info = await expectJson<SessionInfo>(first, 200);
    expect(info).toEqual({
      id: session.id,
      storeId: 'st_default',
      capabilities: ['read', 'manage'],
      webhookIds: null,
      branding: { name: 'Acme Outdoor', accentColor: '#0a7d5a' },
      expiresAt: session.expiresAt,
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const setCookie = first.headers.get('set-cookie')!;
    expect(setCookie).toMatch(
      new RegExp(
        `^hookline_portal_${session.id}=[A-Za-z0-9_-]{43}; Path=/api/v1/external; Max-Age=(359\\d|3600); HttpOnly; Secure; SameSite=Strict$`,
      ),
    );
    expect(first.headers.get('cache-control')).toBe('no-store');
    const cookie = setCookie.split(';')[0];
    expect(await rowsContaining(t.db, cookie.split('=')[1])).toBe(0);

    await expectError(
      await exchange(codeOf(session)),
      401,
      'This portal link has already been used: a link signs in once. Ask for a new link',
    );
    await expectError(
      await exchange('not-a-code'),
      401,
      'This portal link is not valid: check that it was copied whole, or ask for a new one',
    );
    await expectError(await t.api('/portal-sessions/exchange', { method: 'POST', json: {}, key: null }), 400, /^code /);

    const me = await expectJson<{ name: string; portalSession: SessionInfo }>(await byCookie(session.id, cookie, '/me'), 200);
    expect(me.name).toBe('Acme Outdoor');
    expect(me.portalSession.csrfToken).toBe(info.csrfToken);
    await expectJson(await byCookie(session.id, cookie, '/webhooks'), 200);

    const target = endpointsA[1].id;
    const csrfMissing =
      "A request that changes something, signed in by a portal session's cookie, must carry the session's CSRF token in X-CSRF-Token";
    const nameBefore = (await t.db.query<{ name: string }>('SELECT name FROM webhooks WHERE id = $1', [target]))[0].name;
    await expectError(
      await byCookie(session.id, cookie, `/webhooks/${target}`, { method: 'PUT', json: { name: 'by cookie' } }),
      403,
      csrfMissing,
    );
    await expectError(
      await byCookie(session.id, cookie, `/webhooks/${target}`, {
        method: 'PUT',
        json: { name: 'by cookie' },
        csrf: info.csrfToken!.replace(/^./, 'x'),
      }),
      403,
      csrfMissing,
    );
    expect((await t.db.query<{ name: string }>('SELECT name FROM webhooks WHERE id = $1', [target]))[0].name).toBe(nameBefore);
    const renamed = await expectJson<WebhookBody>(
      await byCookie(session.id, cookie, `/webhooks/${target}`, { method: 'PUT', json: { name: 'by cookie' }, csrf: info.csrfToken }),
      200,
    );
    expect(renamed.name).toBe('by cookie');

    // The cookie alone, or the session named without its cookie, signs nothing in.
    await expectError(await t.api('/webhooks', { key: null, headers: { Cookie: cookie } }), 401, 'Missing X-API-Key header');
    await expectError(
      await byCookie(session.id, 'hookline_portal_x=y', '/webhooks'),
      401,
      'This browser is not signed in to this portal session, or the session has ended: open a new portal link',
    );
  });

  it("answers a read session's cookie writes 403 even with the CSRF token", async () => {
    const session = await createSession({ capabilities: ['read'] });
    const { cookie, info } = await signIn(session);
    await expectError(
      await byCookie(session.id, cookie, `/webhooks/${endpointsA[0].id}/rotate-secret`, { method: 'POST', json: {}, csrf: info.csrfToken }),
      403,
      'This portal session lacks the scope webhooks:write (its capabilities: read)',
    );
  });

  it('ends a session at once when revoked: its token and its cookie answer 401, its unused link is refused', async () => {
    const session = await createSession({ capabilities: ['read'] });
    const unused = await createSession({ capabilities: ['read'] });
    const { cookie } = await signIn(session);
    await expectJson(await bearer(session.token, '/webhooks'), 200);

    await expectError(
      await t.api(`/portal-sessions/${session.id}`, { method: 'DELETE', key: storeB.key.key }),
      404,
      `Portal session ${session.id} not found`,
    );
    expect((await t.api(`/portal-sessions/${session.id}`, { method: 'DELETE', key: portalKey.key })).status).toBe(204);
    expect((await t.api(`/portal-sessions/${unused.id}`, { method: 'DELETE', key: portalKey.key })).status).toBe(204);
    const ended = 'This portal session has been ended: ask for a new link';
    await expectError(await bearer(session.token, '/webhooks'), 401, ended);
    await expectError(await byCookie(session.id, cookie, '/webhooks'), 401, ended);
    await expectError(await exchange(codeOf(unused)), 401, ended);
    expect((await t.api(`/portal-sessions/${session.id}`, { method: 'DELETE', key: portalKey.key })).status).toBe(204);
    await expectError(await t.api('/portal-sessions/ps_00000000000000000000000000', { method: 'DELETE', key: portalKey.key }), 404);

    // The platform administrator ends a session of any store.
    const ofB = await createSession({ capabilities: ['read'] }, storeB.key.key);
    expect((await t.api(`/stores/${storeB.storeId}/portal-sessions/${ofB.id}`, { method: 'DELETE' })).status).toBe(204);
    await expectError(await bearer(ofB.token, '/webhooks'), 401, ended);
  });

  it('refuses an expired session, by token, by cookie and by its link, saying it expired', async () => {
    const session = await createSession({ capabilities: ['read'] });
    const unused = await createSession({ capabilities: ['read'] });
    const { cookie } = await signIn(session);
    await t.db.query(`UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE id = ANY ($1)`, [[session.id, unused.id]]);
    const expired = /^This portal session expired at \d{4}-\d\d-\d\dT[\d:.]+Z: ask for a new link$/;
    await expectError(await bearer(session.token, '/me'), 401, expired);
    await expectError(await byCookie(session.id, cookie, '/me'), 401, expired);
    await expectError(await exchange(codeOf(unused)), 401, 'This portal link has expired: ask for a new link');
  });

  it("keeps each session in its store: another store's ids answer 404, lists never show them, cookies never cross", async () => {
    const ofB = await createSession({ capabilities: ['read', 'manage'] }, storeB.key.key);
    const listed = await expectJson<ListPage<WebhookBody>>(await bearer(ofB.token, '/webhooks'), 200);
    expect(listed.data.map((webhook) => webhook.id)).toEqual([endpointB.id]);
    const event = await expectJson<{ id: string }>(
      await t.api('/events', { method: 'POST', json: { type: 'order.created', data: ORDER } }),
      202,
    );
    const [delivery] = await t.db.query<{ id: string }>('SELECT id FROM deliveries WHERE event_id = $1', [event.id]);
    await expectError(await bearer(ofB.token, `/webhooks/${endpointsA[0].id}`), 404);
    await expectError(await bearer(ofB.token, `/webhooks/${endpointsA[0].id}`, { method: 'PUT', json: { name: 'taken' } }), 404);
    await expectError(await bearer(ofB.token, `/deliveries/${delivery.id}`), 404);
    await expectError(await bearer(ofB.token, `/events/${event.id}`), 404);

    // A browser signed in to a session of A and one of B: each cookie answers for its own session only.
    const ofA = await createSession({ capabilities: ['read'] });
    const a = await signIn(ofA);
    const b = await signIn(ofB);
    await expectError(await byCookie(ofB.id, a.cookie, '/webhooks'), 401);
    const both = `${a.cookie}; ${b.cookie}`;
    const seenByB = await expectJson<ListPage<WebhookBody>>(await byCookie(ofB.id, both, '/webhooks'), 200);
    expect(seenByB.data.map((webhook) => webhook.id)).toEqual([endpointB.id]);
    const seenByA = await expectJson<ListPage<WebhookBody>>(await byCookie(ofA.id, both, '/webhooks'), 200);
    expect(seenByA.data.map((webhook) => webhook.id)).not.toContain(endpointB.id);
  });

  it('keeps the dashboard unframable by default', async () => {
    const page = await fetch(`${t.baseUrl}/dashboard`);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });

  it('forgets sessions that ended more than a day ago when the next one is created', async () => {
    const old = await createSession({ capabilities: ['read'] });
    await t.db.query(`UPDATE portal_sessions SET expires_at = now() - interval '25 hours' WHERE id = $1`, [old.id]);
    await createSession({ capabilities: ['read'] });
    await eventually(
      async () =>
        (await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM portal_sessions WHERE id = $1', [old.id]))[0].count,
      (count) => count === 0,
      { what: 'the old session purged' },
    );
  });
});

describe('portal links with PORTAL_FRAME_ANCESTORS', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ env: { PORTAL_FRAME_ANCESTORS: 'https://admin.example.com, http://localhost:8080' } });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('lets those origins frame the dashboard, and gives a cookie that goes with their cross-site frames (SameSite=None, Partitioned)', async () => {
    const page = await fetch(`${t.baseUrl}/dashboard`);
    expect(page.headers.get('content-security-policy')).toContain('frame-ancestors https://admin.example.com http://localhost:8080;');
    expect(page.headers.get('x-frame-options')).toBeNull();
    const session = await expectJson<CreatedSession>(
      await t.api('/portal-sessions', { method: 'POST', json: { capabilities: ['read'] } }),
      201,
    );
    const res = await t.api('/portal-sessions/exchange', { method: 'POST', json: { code: codeOf(session) }, key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toMatch(/; HttpOnly; Secure; SameSite=None; Partitioned$/);
  });
});

/** A server on 127.0.0.1 answering every request with `body`, on a random port. */
async function serve(body: (port: number) => string, type = 'text/html; charset=utf-8'): Promise<{ server: Server; port: number }> {
  const server = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body((server.address() as AddressInfo).port));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function close(server: Server | undefined): Promise<void> {
  return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
}

const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="28" viewBox="0 0 120 28"><rect width="120" height="28" fill="#0a7d5a"/></svg>';
const UI_DEADLINE = 10_000;

describe('portal links in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let storeB: { storeId: string; key: CreatedKey };
  let endpointA: WebhookBody;
  let endpointB: WebhookBody;
  /** An https:// server of the logo, with a self-signed certificate (the browser context ignores it). */
  let logoServer: Server;
  let logoUrl: string;
  let certDir: string;
  const opened: Array<{ page: Page; problems: string[] }> = [];

  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'hookline-portal-logo-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(certDir, 'key.pem'),
        '-out',
        join(certDir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    logoServer = createHttpsServer(
      { key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) },
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/svg+xml' });
        res.end(LOGO_SVG);
      },
    );
    await new Promise<void>((resolve) => logoServer.listen(0, '127.0.0.1', resolve));
    logoUrl = `https://127.0.0.1:${(logoServer.address() as AddressInfo).port}/logo.svg`;

    t = await startApp();
    storeB = await createStoreWithKey(t, 'Store B', ['webhooks:read', 'webhooks:write', 'portal:write']);
    endpointA = await createWebhook(t, { name: 'a-orders', url: HOOK_URL });
    endpointB = await createWebhook(t, { name: 'b-orders', url: HOOK_URL }, storeB.key.key);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await close(logoServer);
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  afterEach(async () => {
    // No script error and no CSP violation on any page (a 4xx answer is logged as "Failed to load resource").
    const problems = opened.flatMap((entry) => entry.problems);
    for (const { page } of opened.splice(0)) await page.context().close();
    expect(problems).toEqual([]);
  });

  async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1366, height: 860 }, colorScheme: 'light', ...options });
    return watch(await context.newPage());
  }

  function watch(page: Page): Page {
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
    });
    opened.push({ page, problems });
    return page;
  }

  async function portal(body: Record<string, unknown>, key: string = ADMIN_KEY): Promise<CreatedSession> {
    return expectJson<CreatedSession>(await t.api('/portal-sessions', { method: 'POST', json: body, key }), 201);
  }

  /** The link as a browser opens it: this app's address (PUBLIC_URL names another port here), the same fragment. */
  function link(session: CreatedSession, on: TestApp = t): string {
    expect(session.url.startsWith(`${on.config.publicUrl}/dashboard#portal=`)).toBe(true);
    return `${on.baseUrl}/dashboard${new URL(session.url).hash}`;
  }

  function heading(page: Page | ReturnType<Page['frameLocator']>, name: string): Locator {
    return page.getByRole('heading', { name, exact: true });
  }

  async function visible(locator: Locator): Promise<void> {
    await locator.first().waitFor({ state: 'visible', timeout: UI_DEADLINE });
  }

  /** A write sent from the page itself, as a user could from the console: the session's headers, CSRF token included. */
  function forcedWrite(page: Page, path: string, body: unknown, withCsrf = true): Promise<number> {
    return page.evaluate(
      async ({ path, body, withCsrf }) => {
        const storage = (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage;
        const stored = JSON.parse(storage.getItem('hookline.portal') ?? '{}') as { id: string; csrfToken: string };
        const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Portal-Session': stored.id };
        if (withCsrf) headers['X-CSRF-Token'] = stored.csrfToken;
        const response = await fetch(`/api/v1/external${path}`, { method: 'PUT', headers, body: JSON.stringify(body) });
        return response.status;
      },
      { path, body, withCsrf },
    );
  }

  it('signs the browser in by its link alone, branded, and the link works once', async () => {
    const session = await portal({ capabilities: ['read', 'manage'], branding: { name: 'Acme Outdoor', accentColor: '#0a7d5a', logoUrl } });
    const page = await newPage({ ignoreHTTPSErrors: true });
    const apiCalls: Array<{ path: string; apiKey: boolean; portal: string | undefined }> = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      const headers = request.headers();
      if (url.pathname.startsWith('/api/'))
        apiCalls.push({ path: url.pathname, apiKey: 'x-api-key' in headers, portal: headers['x-portal-session'] });
    });
    await page.goto(link(session));
    await visible(heading(page, 'Endpoints'));
    await visible(page.getByRole('link', { name: 'a-orders' }));
    await visible(page.getByRole('button', { name: 'New endpoint' }));
    expect(page.url()).not.toContain('portal=');
    expect(await page.getByLabel('API key').count()).toBe(0);

    const brand = page.locator('header .brand');
    expect(await brand.innerText()).toBe('Acme Outdoor');
    expect(await page.title()).toBe('Endpoints · Acme Outdoor');
    const logo = brand.locator('img');
    await expect(logo.getAttribute('src')).resolves.toBe(logoUrl);
    await eventually(
      () => logo.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      (width) => width === 120,
      { what: 'the logo loaded' },
    );
    const accent = await page.evaluate(() => {
      const view = globalThis as unknown as {
        document: { documentElement: unknown };
        getComputedStyle(element: unknown): { getPropertyValue(name: string): string };
      };
      return view.getComputedStyle(view.document.documentElement).getPropertyValue('--accent').trim();
    });
    expect(accent).toBe('#0a7d5a');
    expect(apiCalls.length).toBeGreaterThan(0);
    expect(
      apiCalls.filter((call) => call.apiKey || (call.portal !== session.id && call.path !== '/api/v1/external/portal-sessions/exchange')),
    ).toEqual([]);
    await page.screenshot({ path: join(__dirname, 'artifacts', 'dashboard-portal-branded-laptop.png') });

    // A reload keeps the session (the cookie and the tab's storage), not the code.
    await page.reload();
    await visible(page.getByRole('link', { name: 'a-orders' }));

    const again = await newPage();
    await again.goto(link(session));
    await visible(heading(again, 'This link has already been used'));
    await visible(again.getByText('A link signs in once'));
    expect(await again.getByRole('link', { name: 'a-orders' }).count()).toBe(0);
  }, 60_000);

  it('shows a read session no control that changes anything, and a write forced from the page answers 403', async () => {
    const session = await portal({ capabilities: ['read'] });
    const page = await newPage();
    await page.goto(link(session));
    await visible(page.getByRole('link', { name: 'a-orders' }));
    await visible(
      page.getByText('This session can only read: it cannot create, change or delete endpoints, send test events, or retry deliveries.'),
    );
    await visible(page.getByText('Read only', { exact: true }));
    expect(await page.getByRole('button', { name: 'New endpoint' }).count()).toBe(0);
    await page.getByRole('link', { name: 'a-orders' }).click();
    await visible(heading(page, 'Deliveries'));
    await visible(page.getByText('This session can only read', { exact: false }));
    for (const name of ['Send test event', 'Edit', 'Delete', 'Rotate secret', 'Deactivate', 'Retry all failed…'])
      expect({ name, count: await page.getByRole('button', { name }).count() }).toEqual({ name, count: 0 });

    const before = await t.db.query('SELECT * FROM webhooks WHERE id = $1', [endpointA.id]);
    expect(await forcedWrite(page, `/webhooks/${endpointA.id}`, { name: 'forced' })).toBe(403);
    expect(await forcedWrite(page, `/webhooks/${endpointA.id}`, { name: 'forced' }, false)).toBe(403);
    expect(await t.db.query('SELECT * FROM webhooks WHERE id = $1', [endpointA.id])).toEqual(before);
  }, 60_000);

  it('lands an expired or a revoked session on a clear message, not an error', async () => {
    const revoked = await portal({ capabilities: ['read'], branding: { name: 'Acme Outdoor' } });
    const page = await newPage();
    await page.goto(link(revoked));
    await visible(page.getByRole('link', { name: 'a-orders' }));
    expect((await t.api(`/portal-sessions/${revoked.id}`, { method: 'DELETE' })).status).toBe(204);
    // The link's route, not a click: the page's own refresh may find the session ended first and
    // hide the navigation, link included.
    await page.evaluate("location.hash = '#/catalogue'");
    await visible(heading(page, 'Your session has been ended'));
    await visible(page.getByText('Open the webhook settings in Acme Outdoor again to get a new link.'));
    expect(await page.getByLabel('API key').count()).toBe(0);
    expect(await page.locator('#nav').isVisible()).toBe(false);
    await page.screenshot({ path: join(__dirname, 'artifacts', 'dashboard-portal-ended-laptop.png') });

    const expiring = await portal({ capabilities: ['read'] });
    const second = await newPage();
    await second.goto(link(expiring));
    await visible(second.getByRole('link', { name: 'a-orders' }));
    await t.db.query(`UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring.id]);
    await second.reload();
    await visible(heading(second, 'Your session has expired'));
    await visible(second.getByText(/^It ended at /));
    expect(await second.getByRole('link', { name: 'a-orders' }).count()).toBe(0);
  }, 60_000);

  it("keeps a session to its store: another store's endpoints are never listed nor opened, even in one browser", async () => {
    const ofA = await portal({ capabilities: ['read', 'manage'] });
    const ofB = await portal({ capabilities: ['read', 'manage'] }, storeB.key.key);
    const page = await newPage();
    await page.goto(link(ofA));
    await visible(page.getByRole('link', { name: 'a-orders' }));
    expect(await page.getByRole('link', { name: 'b-orders' }).count()).toBe(0);
    await page.goto(`${t.baseUrl}/dashboard#/endpoints/${endpointB.id}`);
    await visible(page.getByText(`Not found: Webhook ${endpointB.id} not found`, { exact: false }));
    expect(await page.getByText('b-orders').count()).toBe(0);

    // Store B's link opened in another tab of the same browser: each tab keeps its own store.
    const tabB = watch(await page.context().newPage());
    await tabB.goto(link(ofB));
    await visible(tabB.getByRole('link', { name: 'b-orders' }));
    expect(await tabB.getByRole('link', { name: 'a-orders' }).count()).toBe(0);
    await page.goto(`${t.baseUrl}/dashboard#/`);
    await page.reload();
    await visible(page.getByRole('link', { name: 'a-orders' }));
    expect(await page.getByRole('link', { name: 'b-orders' }).count()).toBe(0);
  }, 60_000);

  describe('framed by another site', () => {
    let framed: TestApp;
    let allowed: { server: Server; port: number };
    let other: { server: Server; port: number };
    /** The link each parent page frames. */
    let src = '';

    beforeAll(async () => {
      const parent = (port: number) =>
        `<!doctype html><title>Platform admin ${port}</title><h1>Platform admin</h1><iframe id="portal" title="Webhooks" src="${src}" width="1200" height="700"></iframe>`;
      allowed = await serve(parent);
      other = await serve(parent);
      framed = await startApp({ env: { PORTAL_FRAME_ANCESTORS: `http://localhost:${allowed.port}` } });
      await createWebhook(framed, { name: 'framed-orders', url: HOOK_URL });
    }, 60_000);

    afterAll(async () => {
      await framed?.close();
      await close(allowed?.server);
      await close(other?.server);
    });

    it('loads, signed in by its link, in a page of an allowed origin (another site: the cookie is SameSite=None, Partitioned)', async () => {
      src = link(
        await expectJson<CreatedSession>(await framed.api('/portal-sessions', { method: 'POST', json: { capabilities: ['read'] } }), 201),
        framed,
      );
      const page = await newPage();
      await page.goto(`http://localhost:${allowed.port}/`);
      const frame = page.frameLocator('#portal');
      await visible(heading(frame, 'Endpoints'));
      await visible(frame.getByRole('link', { name: 'framed-orders' }));
      await page.screenshot({ path: join(__dirname, 'artifacts', 'dashboard-portal-framed-laptop.png') });
    }, 60_000);

    it('is refused in a page of any other origin', async () => {
      src = link(
        await expectJson<CreatedSession>(await framed.api('/portal-sessions', { method: 'POST', json: { capabilities: ['read'] } }), 201),
        framed,
      );
      const context = await browser.newContext();
      const page = await context.newPage();
      const refusals: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') refusals.push(message.text());
      });
      try {
        await page.goto(`http://localhost:${other.port}/`);
        await eventually(
          async () => refusals,
          (found) => found.some((text) => text.includes('frame-ancestors')),
          { what: 'the frame refused by its Content-Security-Policy' },
        );
        expect(refusals.join('\n')).toContain(`frame-ancestors http://localhost:${allowed.port}`);
        const frame = page.frames().find((candidate) => candidate !== page.mainFrame())!;
        expect(
          await frame
            .locator('h1')
            .count()
            .catch(() => 0),
        ).toBe(0);
        expect(await page.frameLocator('#portal').getByRole('heading', { name: 'Endpoints' }).count()).toBe(0);
      } finally {
        await context.close();
      }
    }, 60_000);
  });
});
