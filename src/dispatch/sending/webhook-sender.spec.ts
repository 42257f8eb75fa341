import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../config/app-config';
import { UrlPolicy } from '../../webhooks/url-policy';
import { signingSecret } from './signature';
import { RESPONSE_EXCERPT_BYTES, WebhookSender } from './webhook-sender';

const SECRET = signingSecret(`whsec_${Buffer.alloc(32, 9).toString('base64')}`);
const OLD = signingSecret(`whsec_${Buffer.alloc(32, 3).toString('base64')}`);
const BODY = '{"id":"evt_1","type":"order.created","timestamp":"2026-11-25T10:00:00.000Z","data":{}}';

interface Seen {
  headers: IncomingMessage['headers'];
  body: string;
}

describe('WebhookSender', () => {
  let server: Server;
  let base: string;
  let seen: Seen[];
  let respond: (res: ServerResponse) => void;
  let sender: WebhookSender;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        respond(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = loadConfig({ DELIVERY_TIMEOUT_MS: '500' }).with({ allowHttpUrls: true, allowPrivateNetworks: true });
    sender = new WebhookSender(config, new UrlPolicy(config));
  });

  beforeEach(() => {
    seen = [];
    respond = (res) => res.writeHead(200).end('ok');
  });

  afterAll(async () => {
    await sender.onApplicationShutdown();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('POSTs the body as it is, signed over its timestamp, with the event id and a User-Agent', async () => {
    const result = await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET });
    expect(result).toMatchObject({ succeeded: true, statusCode: 200, error: null, responseBody: 'ok' });
    const [{ headers, body }] = seen;
    expect(body).toBe(BODY);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-webhook-id']).toBe('evt_1');
    expect(headers['user-agent']).toMatch(/^Hookline-Webhook\/1\.0 \(\+.+\)$/);
    const timestamp = String(headers['x-webhook-timestamp']);
    expect(Math.abs(Number(timestamp) - Date.now())).toBeLessThan(5_000);
    const expected = createHmac('sha256', SECRET.text).update(`${timestamp}.${BODY}`).digest('hex');
    expect(headers['x-webhook-signature']).toBe(`sha256=${expected}`);
  });

  it('never sends to the address and port its own server listens on, nor to the host of PUBLIC_URL', async () => {
    const port = (server.address() as AddressInfo).port;
    // As if this receiver were Hookline's own server: PORT is its port, HOST every address.
    const config = loadConfig({ PORT: String(port), PUBLIC_URL: 'http://hooks.example.com' }).with({
      allowHttpUrls: true,
      allowPrivateNetworks: true,
    });
    const own = new WebhookSender(config, new UrlPolicy(config));
    try {
      const looped = await own.send({
        url: `http://localhost:${port}/api/v1/external/deliveries/del_1/retry`,
        eventId: 'evt_1',
        body: BODY,
        secret: SECRET,
      });
      expect(looped).toMatchObject({ succeeded: false, statusCode: null });
      expect(looped.error).toMatch(/^blocked: refusing to deliver to localhost: it is Hookline itself \(it reached (127\.0\.0\.1|::1):\d+/);
      const proxied = await own.send({
        url: 'http://hooks.example.com/api/v1/external/events',
        eventId: 'evt_1',
        body: BODY,
        secret: SECRET,
      });
      expect(proxied.error).toBe(
        'blocked: refusing to connect to hooks.example.com:80: http://hooks.example.com is its own API (PUBLIC_URL)',
      );
      expect(seen).toEqual([]);
    } finally {
      await own.onApplicationShutdown();
    }
  });

  it('fails an attempt answered with a non-2xx status and keeps at most 4 KiB of the answer', async () => {
    respond = (res) => res.writeHead(503).end('x'.repeat(RESPONSE_EXCERPT_BYTES * 2));
    const result = await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET });
    expect(result).toMatchObject({ succeeded: false, statusCode: 503, error: 'HTTP 503' });
    expect(result.responseBody).toHaveLength(RESPONSE_EXCERPT_BYTES);
  });

  it('does not follow a redirect', async () => {
    respond = (res) => res.writeHead(302, { Location: `${base}/elsewhere` }).end();
    const result = await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET });
    expect(result.succeeded).toBe(false);
    expect(result.error).toMatch(/redirect 302 not followed/);
    expect(seen).toHaveLength(1);
  });

  it('fails an attempt that outlives its time limit', async () => {
    respond = () => undefined;
    const result = await sender.send({ url: `${base}/hang`, eventId: 'evt_1', body: BODY, secret: SECRET }, 200);
    expect(result.succeeded).toBe(false);
    expect(result.statusCode).toBeNull();
    expect(result.durationMs).toBeGreaterThanOrEqual(190);
    expect(result.error).toMatch(/time/i);
  });

  it('fails an attempt whose connection is refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const result = await sender.send({ url: `http://127.0.0.1:${port}/`, eventId: 'evt_1', body: BODY, secret: SECRET });
    expect(result).toMatchObject({ succeeded: false, statusCode: null });
    expect(result.error).toBeTruthy();
  });

  it('signs with the Standard Webhooks headers too: seconds, the decoded key, id.timestamp.body', async () => {
    await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET });
    const [{ headers }] = seen;
    expect(headers['webhook-id']).toBe('evt_1');
    const seconds = String(headers['webhook-timestamp']);
    expect(Math.abs(Number(seconds) - Date.now() / 1000)).toBeLessThan(5);
    const expected = createHmac('sha256', Buffer.alloc(32, 9)).update(`evt_1.${seconds}.${BODY}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('during an overlap keeps X-Webhook-Signature on the old secret and gives both standard signatures, new first', async () => {
    await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET, previousSecret: OLD });
    const [{ headers }] = seen;
    const ms = String(headers['x-webhook-timestamp']);
    expect(headers['x-webhook-signature']).toBe(`sha256=${createHmac('sha256', OLD.text).update(`${ms}.${BODY}`).digest('hex')}`);
    const seconds = String(headers['webhook-timestamp']);
    const sign = (key: Buffer) => `v1,${createHmac('sha256', key).update(`evt_1.${seconds}.${BODY}`).digest('base64')}`;
    expect(headers['webhook-signature']).toBe(`${sign(SECRET.key)} ${sign(OLD.key)}`);
  });

  it('sends the endpoint’s own headers, and its signature headers cannot be overridden by them', async () => {
    await sender.send({
      url: `${base}/hook`,
      eventId: 'evt_1',
      body: BODY,
      secret: SECRET,
      headers: { Authorization: 'Bearer t', 'X-Store': 's1' },
    });
    const [{ headers }] = seen;
    expect(headers).toMatchObject({ authorization: 'Bearer t', 'x-store': 's1', 'content-type': 'application/json' });
  });

  it('sends only the chosen signature set', async () => {
    const config = loadConfig({ SIGNATURE_HEADERS: 'standard' }).with({ allowHttpUrls: true, allowPrivateNetworks: true });
    const standardOnly = new WebhookSender(config, new UrlPolicy(config));
    try {
      await standardOnly.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET });
    } finally {
      await standardOnly.onApplicationShutdown();
    }
    const [{ headers }] = seen;
    expect(headers['webhook-signature']).toBeDefined();
    expect(headers['x-webhook-signature']).toBeUndefined();
    expect(headers['x-webhook-timestamp']).toBeUndefined();
  });

  it('reads Retry-After on a 429 or 503 only', async () => {
    respond = (res) => res.writeHead(429, { 'Retry-After': '2' }).end();
    expect(await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET })).toMatchObject({
      statusCode: 429,
      retryAfterMs: 2_000,
    });
    respond = (res) => res.writeHead(503, { 'Retry-After': new Date(Date.now() + 3_000).toUTCString() }).end();
    const dated = await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET });
    expect(dated.retryAfterMs).toBeGreaterThan(1_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(3_000);
    respond = (res) => res.writeHead(500, { 'Retry-After': '2' }).end();
    expect((await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: BODY, secret: SECRET })).retryAfterMs).toBeUndefined();
  });
});
