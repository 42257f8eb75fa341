import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { URL_RESOLVER } from '../src/webhooks/url-policy';
import { startApp, TestApp } from './support/app';
import { createAuthority, type Authority, type IssuedPem } from './support/certificates';
import { eventually } from './support/eventually';
import { expectError, expectJson, fakeResolver, rowsContaining } from './support/expectations';
import { createWebhook, deliveriesOf, orderData, publish, type CreatedWebhook } from './support/fixtures';
import { Receiver, type ReceivedRequest } from './support/receiver';

/** An endpoint as answered, with its receiver authentication. */
type Shown = CreatedWebhook & { auth: unknown; tls: unknown };

interface TestResult {
  success: boolean;
  statusCode: number | null;
  error: string | null;
}

/** A local OAuth2 token endpoint (client-credentials grant) that counts what it is asked. */
class TokenServer {
  readonly requests: Array<{ authorization?: string; form: Record<string, string> }> = [];
  /** What it answers; by default a new token per request, lasting `expiresIn` seconds. */
  answer: (n: number) => { status: number; body: unknown } = (n) => ({
    status: 200,
    body: { access_token: `tok-${n}`, token_type: 'Bearer', expires_in: 3600 },
  });

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<TokenServer> {
    const hub: { handle?: (req: IncomingMessage, body: string, res: ServerResponse) => void } = {};
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => hub.handle?.(req, body, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const tokens = new TokenServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`);
    hub.handle = (req, body, res) => {
      tokens.requests.push({ authorization: req.headers.authorization, form: Object.fromEntries(new URLSearchParams(body)) });
      const { status, body: answer } = tokens.answer(tokens.requests.length);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    };
    return tokens;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Hookline proving itself to receivers: HTTP Basic, a bearer token, an OAuth2 access token of the
 * client-credentials grant (from a local token server) and a client certificate for mutual TLS (a
 * local HTTPS receiver that demands one from a test authority). Secret parts never come back.
 */
describe('receiver authentication', () => {
  let t: TestApp;
  let receiver: Receiver;
  let tokens: TokenServer;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,200' } });
    receiver = await Receiver.start();
    tokens = await TokenServer.start();
  });

  afterAll(async () => {
    await tokens?.close();
    await receiver?.close();
    await t?.close();
  });

  beforeEach(() => receiver.respondStatus(200));

  const resource = async (id: string) => expectJson<Shown>(await t.api(`/webhooks/${id}`), 200);
  const put = (id: string, json: unknown) => t.api(`/webhooks/${id}`, { method: 'PUT', json });
  const testDelivery = async (id: string) => expectJson<TestResult>(await t.api(`/webhooks/${id}/test`, { method: 'POST' }), 200);
  const authorizationOf = (request: ReceivedRequest) => request.headers.authorization;

  async function deliverTo(webhook: CreatedWebhook, path: string, n: number): Promise<ReceivedRequest> {
    const event = await publish(t, 'order.created', orderData(n));
    const [request] = await receiver.waitFor(1, (r) => r.path === path && r.headers['x-webhook-id'] === event.id);
    return request;
  }

  describe('basic and bearer', () => {
    it('sends HTTP Basic credentials, and never answers the password', async () => {
      const webhook = await createWebhook(t, `${receiver.url}/basic`, ['order.created'], {
        auth: { type: 'basic', username: 'hookline', password: 'pa55-w0rd-basic' },
      });
      expect(webhook).toMatchObject({ auth: { type: 'basic', username: 'hookline' }, tls: null });
      const request = await deliverTo(webhook, '/basic', 1);
      expect(authorizationOf(request)).toBe(`Basic ${Buffer.from('hookline:pa55-w0rd-basic').toString('base64')}`);
      const answers = [
        JSON.stringify(webhook),
        await (await t.api(`/webhooks/${webhook.id}`)).text(),
        await (await t.api('/webhooks')).text(),
      ];
      for (const answer of answers) expect(answer).not.toContain('pa55-w0rd-basic');
      // Stored sealed: no table holds it in clear.
      expect(await rowsContaining(t.db, 'pa55-w0rd-basic')).toBe(0);
    });

    it('sends a bearer token, on deliveries and test deliveries alike', async () => {
      const webhook = await createWebhook(t, `${receiver.url}/bearer`, ['order.created'], {
        auth: { type: 'bearer', token: 'sk_bearer_81d2c6e0' },
      });
      expect((webhook as Shown).auth).toEqual({ type: 'bearer' });
      expect(authorizationOf(await deliverTo(webhook, '/bearer', 2))).toBe('Bearer sk_bearer_81d2c6e0');
      expect(await testDelivery(webhook.id)).toMatchObject({ success: true });
      expect(receiver.to('/bearer').map(authorizationOf)).toEqual(['Bearer sk_bearer_81d2c6e0', 'Bearer sk_bearer_81d2c6e0']);
      expect(await rowsContaining(t.db, 'sk_bearer_81d2c6e0')).toBe(0);
    });

    it('replaces and clears auth with PUT, taking effect on the next attempt', async () => {
      const webhook = await createWebhook(t, `${receiver.url}/changing`, ['order.created'], { auth: { type: 'bearer', token: 'first' } });
      expect(authorizationOf(await deliverTo(webhook, '/changing', 3))).toBe('Bearer first');
      expect(await expectJson(await put(webhook.id, { auth: { type: 'bearer', token: 'second' } }), 200)).toMatchObject({
        auth: { type: 'bearer' },
      });
      expect(authorizationOf(await deliverTo(webhook, '/changing', 4))).toBe('Bearer second');
      expect(await expectJson(await put(webhook.id, { auth: null }), 200)).toMatchObject({ auth: null });
      expect(authorizationOf(await deliverTo(webhook, '/changing', 5))).toBeUndefined();
    });
  });

  describe('refusals', () => {
    let webhook: CreatedWebhook;
    let authority: Authority;
    let client: IssuedPem;
    let stranger: IssuedPem;

    beforeAll(async () => {
      webhook = await createWebhook(t, `${receiver.url}/refusals`, ['order.created'], { auth: { type: 'bearer', token: 'kept' } });
      authority = await createAuthority();
      client = await authority.issue({ commonName: 'hookline', use: 'client' });
      stranger = await authority.issue({ commonName: 'stranger', use: 'client' });
    });

    it.each([
      ['an unknown type', { auth: { type: 'digest', username: 'a' } }, 'auth.type must be one of basic, bearer, oauth2'],
      ['a missing field', { auth: { type: 'basic', username: 'a' } }, 'auth.password must be a non-empty string'],
      ['a field of another type', { auth: { type: 'bearer', token: 't', username: 'a' } }, 'auth.username is not a field of bearer auth'],
      [
        'a token URL with credentials in it',
        { auth: { type: 'oauth2', tokenUrl: 'https://u:p@auth.example.com/token', clientId: 'c', clientSecret: 's' } },
        'auth.tokenUrl must not contain a username or password',
      ],
      [
        'a token URL that is not http(s)',
        { auth: { type: 'oauth2', tokenUrl: 'ftp://auth.example.com/token', clientId: 'c', clientSecret: 's' } },
        'auth.tokenUrl must use https:// or http://',
      ],
      [
        'auth beside an Authorization header',
        { headers: { Authorization: 'Bearer x' } },
        /^auth: an endpoint with auth sends its own Authorization/,
      ],
    ])('refuses %s with a 400 naming the field, changing nothing', async (_what, body, message) => {
      const before = await resource(webhook.id);
      await expectError(await put(webhook.id, body), 400, message);
      expect(await resource(webhook.id)).toEqual(before);
    });

    it('refuses PEM that does not parse and a key that is not the certificate’s', async () => {
      const before = await resource(webhook.id);
      await expectError(
        await put(webhook.id, { tls: { clientCertificate: 'not a certificate', clientKey: client.key } }),
        400,
        /^tls.clientCertificate must be/,
      );
      await expectError(
        await put(webhook.id, { tls: { clientCertificate: client.certificate, clientKey: stranger.key } }),
        400,
        'tls.clientKey does not match tls.clientCertificate',
      );
      await expectError(
        await put(webhook.id, { tls: { clientCertificate: client.certificate, clientKey: client.key, ca: 'junk' } }),
        400,
        /^tls.ca must be one or more PEM certificates/,
      );
      await expectError(
        await t.api('/webhooks', {
          method: 'POST',
          json: {
            name: 'x',
            url: `${receiver.url}/x`,
            events: ['order.created'],
            tls: { clientCertificate: client.certificate, clientKey: stranger.key },
          },
        }),
        400,
        'tls.clientKey does not match tls.clientCertificate',
      );
      expect(await resource(webhook.id)).toEqual(before);
    });
  });

  describe('OAuth2 client credentials', () => {
    const auth = (extra: Record<string, unknown> = {}) => ({
      type: 'oauth2',
      tokenUrl: tokens.url,
      clientId: 'hookline-client',
      clientSecret: 'cs_oauth_secret_77',
      scope: 'webhooks',
      ...extra,
    });

    const created: string[] = [];
    const createOAuth2Webhook = async (path: string, extra: Record<string, unknown> = {}) => {
      const webhook = await createWebhook(t, `${receiver.url}${path}`, ['order.created'], { auth: auth(extra) });
      created.push(webhook.id);
      return webhook;
    };

    // Every endpoint receives every order.created: each test's endpoint goes, so that only its own token requests are counted.
    afterEach(async () => {
      for (const id of created.splice(0)) await t.api(`/webhooks/${id}`, { method: 'DELETE' });
    });

    beforeEach(() => {
      tokens.requests.length = 0;
      tokens.answer = (n) => ({ status: 200, body: { access_token: `tok-${n}`, token_type: 'Bearer', expires_in: 3600 } });
    });

    it('fetches one token for many deliveries, and shows no client secret', async () => {
      const webhook = await createOAuth2Webhook('/oauth-many');
      expect((webhook as Shown).auth).toEqual({
        type: 'oauth2',
        tokenUrl: tokens.url,
        clientId: 'hookline-client',
        scope: 'webhooks',
        audience: null,
      });
      await t.api('/events/batch', {
        method: 'POST',
        json: { events: Array.from({ length: 20 }, (_, i) => ({ type: 'order.created', data: orderData(100 + i) })) },
      });
      const requests = await receiver.waitFor(20, (r) => r.path === '/oauth-many');
      expect(new Set(requests.map(authorizationOf))).toEqual(new Set(['Bearer tok-1']));
      expect(tokens.requests).toHaveLength(1);
      expect(tokens.requests[0].form).toEqual({ grant_type: 'client_credentials', scope: 'webhooks' });
      expect(tokens.requests[0].authorization).toBe(`Basic ${Buffer.from('hookline-client:cs_oauth_secret_77').toString('base64')}`);
      expect(JSON.stringify(await resource(webhook.id))).not.toContain('cs_oauth_secret_77');
      expect(await rowsContaining(t.db, 'cs_oauth_secret_77')).toBe(0);
    });

    it('fetches a new token once the last one expires', async () => {
      tokens.answer = (n) => ({ status: 200, body: { access_token: `short-${n}`, token_type: 'bearer', expires_in: 1 } });
      const webhook = await createOAuth2Webhook('/oauth-expiry');
      expect(authorizationOf(await deliverTo(webhook, '/oauth-expiry', 200))).toBe('Bearer short-1');
      const issuedAt = Date.now();
      expect(authorizationOf(await deliverTo(webhook, '/oauth-expiry', 201))).toBe('Bearer short-1');
      // Waiting on the clock itself: the token lasts a second.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, issuedAt + 1_000 - Date.now())));
      expect(authorizationOf(await deliverTo(webhook, '/oauth-expiry', 202))).toBe('Bearer short-2');
      expect(tokens.requests).toHaveLength(2);
    });

    it('fetches a new token after the receiver answers 401, and the attempt succeeds with it', async () => {
      const webhook = await createOAuth2Webhook('/oauth-revoked');
      expect(authorizationOf(await deliverTo(webhook, '/oauth-revoked', 300))).toBe('Bearer tok-1');
      // The receiver revokes tok-1.
      receiver.respondWith((request, res) => {
        res.writeHead(request.path === '/oauth-revoked' && authorizationOf(request) === 'Bearer tok-1' ? 401 : 200);
        res.end();
      });
      const event = await publish(t, 'order.created', orderData(301));
      const seen = await receiver.waitFor(2, (r) => r.path === '/oauth-revoked' && r.headers['x-webhook-id'] === event.id);
      expect(seen.map(authorizationOf)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
      const [done] = await eventually(
        () => deliveriesOf(t, webhook.id, '?status=succeeded'),
        (rows) => rows.some((row) => row.eventId === event.id),
        { what: 'the delivery after a 401 to succeed' },
      ).then((rows) => rows.filter((row) => row.eventId === event.id));
      expect(done).toMatchObject({ attemptCount: 1, lastStatusCode: 200 });
      expect(tokens.requests).toHaveLength(2);
    });

    it('fails the attempt, saying why, when the token server refuses', async () => {
      tokens.answer = () => ({ status: 401, body: { error: 'invalid_client' } });
      const webhook = await createOAuth2Webhook('/oauth-refused');
      expect(await testDelivery(webhook.id)).toEqual(
        expect.objectContaining({
          success: false,
          statusCode: null,
          error: 'OAuth2 token request failed: HTTP 401 from token URL (invalid_client)',
        }),
      );
      const event = await publish(t, 'order.created', orderData(400));
      const [failing] = await eventually(
        () => deliveriesOf(t, webhook.id),
        (rows) => rows.some((row) => row.eventId === event.id && row.lastError !== null),
        { what: 'a failed attempt' },
      ).then((rows) => rows.filter((row) => row.eventId === event.id));
      expect(failing.lastError).toBe('OAuth2 token request failed: HTTP 401 from token URL (invalid_client)');
      expect(receiver.to('/oauth-refused')).toHaveLength(0);
    });
  });

  describe('mutual TLS', () => {
    let authority: Authority;
    let server: ReturnType<typeof createHttpsServer>;
    let url: string;
    const clients: string[] = [];

    beforeAll(async () => {
      authority = await createAuthority('Receiver Private CA');
      const serverCert = await authority.issue({ commonName: '127.0.0.1', use: 'server' });
      server = createHttpsServer(
        { cert: serverCert.certificate, key: serverCert.key, ca: authority.certificate, requestCert: true, rejectUnauthorized: true },
        (req, res) => {
          clients.push(String((req.socket as TLSSocket).getPeerCertificate().subject.CN));
          req.resume();
          req.on('end', () => {
            res.writeHead(200);
            res.end('ok');
          });
        },
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/mtls`;
    });

    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    });

    it('presents the client certificate to a receiver that demands one, trusting its private authority', async () => {
      const client = await authority.issue({ commonName: 'hookline-berlin', use: 'client' });
      const webhook = await createWebhook(t, url, ['order.created'], {
        tls: { clientCertificate: client.certificate, clientKey: client.key, ca: authority.certificate },
      });
      expect((webhook as Shown).tls).toMatchObject({
        clientCertificate: {
          subject: 'CN=hookline-berlin',
          issuer: 'CN=Receiver Private CA',
          fingerprint: expect.stringMatching(/^[0-9A-F:]{95}$/),
        },
        ca: [{ subject: 'CN=Receiver Private CA' }],
      });
      expect(JSON.stringify(webhook)).not.toContain('PRIVATE KEY');
      await publish(t, 'order.created', orderData(500));
      await eventually(
        () => deliveriesOf(t, webhook.id, '?status=succeeded'),
        (rows) => rows.length === 1,
        { what: 'a delivery over mutual TLS' },
      );
      expect(await testDelivery(webhook.id)).toMatchObject({ success: true, statusCode: 200 });
      expect(clients).toEqual(['hookline-berlin', 'hookline-berlin']);

      // A certificate of another authority: the receiver refuses the handshake, on a new pool.
      const outsider = await (await createAuthority('Someone Else')).issue({ commonName: 'outsider', use: 'client' });
      await expectJson(
        await put(webhook.id, { tls: { clientCertificate: outsider.certificate, clientKey: outsider.key, ca: authority.certificate } }),
        200,
      );
      const refused = await testDelivery(webhook.id);
      expect(refused).toMatchObject({ success: false, statusCode: null });
      expect(clients).toHaveLength(2);
    });

    it('fails without a client certificate, and refuses a receiver outside the given authority', async () => {
      const client = await authority.issue({ commonName: 'hookline-berlin', use: 'client' });
      const plain = await createWebhook(t, url, ['order.created']);
      expect(await testDelivery(plain.id)).toMatchObject({ success: false, error: expect.stringMatching(/^TLS error/) });
      const otherCa = await createAuthority('Not The Receiver CA');
      const wrongTrust = await createWebhook(t, url, ['order.created'], {
        tls: { clientCertificate: client.certificate, clientKey: client.key, ca: otherCa.certificate },
      });
      expect(await testDelivery(wrongTrust.id)).toMatchObject({ success: false, error: expect.stringMatching(/^TLS error/) });
    });
  });
});

/** The token URL is held to the endpoint URL's policy: at registration, and at every connection. */
describe('receiver authentication with ALLOW_PRIVATE_NETWORKS=false and ALLOW_HTTP_URLS=false', () => {
  let t: TestApp;
  const answers: Record<string, string[]> = { 'hooks.example.com': ['93.184.216.34'], 'auth.example.com': ['93.184.216.35'] };
  const dns = fakeResolver(answers);
  const auth = (tokenUrl: string) => ({ type: 'oauth2', tokenUrl, clientId: 'c', clientSecret: 's' });

  beforeAll(async () => {
    t = await startApp({
      env: { ALLOW_PRIVATE_NETWORKS: 'false', ALLOW_HTTP_URLS: 'false', RETRY_SCHEDULE_MS: '0' },
      overrides: [{ provide: URL_RESOLVER, useValue: jest.fn((hostname: string) => dns(hostname.replace(/\.$/, ''))) }],
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('refuses a token URL on a private address, naming the field', async () => {
    const create = (tokenUrl: string) =>
      t.api('/webhooks', {
        method: 'POST',
        json: { name: 'x', url: 'https://hooks.example.com/in', events: ['order.created'], auth: auth(tokenUrl) },
      });
    await expectError(await create('https://10.0.0.7/token'), 400, /^auth.tokenUrl host is .*private/);
    await expectError(await create('https://127.0.0.1/token'), 400, /^auth.tokenUrl host is .*loopback/);
    await expectError(await create('http://auth.example.com/token'), 400, 'auth.tokenUrl must use https://');
  });

  it('checks the token URL again when it connects, so a name rebound to a private address gets no request', async () => {
    const webhook = await createWebhook(t, 'https://hooks.example.com/in', ['order.created'], {
      auth: auth('https://auth.example.com/token'),
    });
    answers['auth.example.com'] = ['127.0.0.1'];
    const result = await expectJson<TestResult>(await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' }), 200);
    expect(result).toMatchObject({
      success: false,
      statusCode: null,
      error: expect.stringMatching(/^OAuth2 token request failed: blocked: /),
    });
  });
});
