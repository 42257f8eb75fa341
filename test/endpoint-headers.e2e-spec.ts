import { SecretCipher } from '../src/webhooks/secret-cipher';
import { openSensitiveValues } from '../src/webhooks/sensitive-headers';
import { ADMIN_KEY, startApp, TEST_ENCRYPTION_KEY, TestApp } from './support/app';
import { createTestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { expectError, expectJson, rowCounts, rowsContaining, type CreatedKey } from './support/expectations';
import { createWebhook, deliveriesOf, orderData, publish, type CreatedWebhook } from './support/fixtures';
import { Receiver, type ReceivedRequest } from './support/receiver';

interface Resource {
  id: string;
  headers: Record<string, string | null>;
  sensitiveHeaders: string[];
  updatedAt: string;
}

const BEARER = 'Bearer sk_live_4f9a1c7e2b';
const API_KEY = 'k-81d2c6e0-secret-value';

/**
 * Custom headers, bounded and kept secret: names of at most 256 characters and 8 KiB of names and
 * values per endpoint; credentials (Authorization, Cookie, names with key, token, secret, auth,
 * password or signature) stored sealed, never read back by any key, yet sent on every attempt.
 */
describe('endpoint headers (RETRY_SCHEDULE_MS=0,200,200)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let readOnly: CreatedKey;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,200' } });
    receiver = await Receiver.start();
    readOnly = await expectJson<CreatedKey>(
      await t.api('/api-keys', { method: 'POST', json: { name: 'read only', scopes: ['webhooks:read'] } }),
      201,
    );
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  beforeEach(() => receiver.respondStatus(200));

  const resource = async (id: string, key?: string) => expectJson<Resource>(await t.api(`/webhooks/${id}`, { key }), 200);
  const put = (id: string, json: unknown) => t.api(`/webhooks/${id}`, { method: 'PUT', json });
  const headerOf = (request: ReceivedRequest, name: string) => request.headers[name.toLowerCase()] as string | undefined;

  async function deliverOne(webhook: CreatedWebhook, path: string, n: number): Promise<ReceivedRequest> {
    const event = await publish(t, 'order.created', orderData(n));
    const [request] = await receiver.waitFor(1, (r) => r.path === path && r.headers['x-webhook-id'] === event.id);
    return request;
  }

  describe('sensitive headers', () => {
    let webhook: CreatedWebhook;
    const path = '/sensitive';

    beforeAll(async () => {
      webhook = await createWebhook(t, `${receiver.url}${path}`, ['order.created'], {
        headers: { Authorization: BEARER, 'X-Api-Key': API_KEY, 'X-Store': 'berlin-1' },
      });
    });

    it('answers them as null and lists their names, on create, GET, list and PUT, to a read-only key too', async () => {
      const shown = {
        headers: { Authorization: null, 'X-Api-Key': null, 'X-Store': 'berlin-1' },
        // Sorted by name; the headers come in the order PostgreSQL's jsonb keeps them.
        sensitiveHeaders: ['Authorization', 'X-Api-Key'],
      };
      expect(webhook).toMatchObject(shown);
      expect(await resource(webhook.id, readOnly.key)).toMatchObject(shown);
      expect(await resource(webhook.id)).toMatchObject(shown);
      const answers: string[] = [];
      for (const key of [readOnly.key, ADMIN_KEY]) {
        const list = await t.api('/webhooks?limit=200', { key });
        answers.push(await list.clone().text());
        expect((await expectJson<{ data: Resource[] }>(list, 200)).data.find((w) => w.id === webhook.id)).toMatchObject(shown);
        answers.push(await (await t.api(`/webhooks/${webhook.id}`, { key })).text());
      }
      const renamed = await put(webhook.id, { name: 'renamed' });
      answers.push(await renamed.clone().text());
      expect(await expectJson(renamed, 200)).toMatchObject(shown);
      for (const text of answers) {
        expect(text).not.toContain('sk_live_4f9a1c7e2b');
        expect(text).not.toContain(API_KEY);
      }
    });

    it('stores their values only sealed with SECRET_ENCRYPTION_KEY: no row of any table holds them in clear', async () => {
      expect(await rowsContaining(t.db, 'sk_live_4f9a1c7e2b')).toBe(0);
      expect(await rowsContaining(t.db, API_KEY)).toBe(0);
      const [row] = await t.db.query<{ headers: Record<string, string | null>; sealed: string }>(
        'SELECT headers, sensitive_headers_encrypted AS sealed FROM webhooks WHERE id = $1',
        [webhook.id],
      );
      expect(row.headers).toEqual({ Authorization: null, 'X-Api-Key': null, 'X-Store': 'berlin-1' });
      const cipher = new SecretCipher(Buffer.from(TEST_ENCRYPTION_KEY, 'base64'));
      expect(openSensitiveValues(cipher, webhook.id, row.sealed)).toEqual({ Authorization: BEARER, 'X-Api-Key': API_KEY });
    });

    it('sends their values on every attempt, retries included, and on the endpoint test', async () => {
      receiver.respondStatus(500);
      const event = await publish(t, 'order.created', orderData(1));
      const attempts = await receiver.waitFor(3, (r) => r.path === path && r.headers['x-webhook-id'] === event.id);
      for (const request of attempts) {
        expect([headerOf(request, 'Authorization'), headerOf(request, 'X-Api-Key'), headerOf(request, 'X-Store')]).toEqual([
          BEARER,
          API_KEY,
          'berlin-1',
        ]);
      }
      receiver.respondStatus(200);
      const test = await expectJson<{ success: boolean; eventId: string }>(
        await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' }),
        200,
      );
      expect(test.success).toBe(true);
      const tested = receiver.to(path).find((r) => r.headers['x-webhook-id'] === test.eventId)!;
      expect(headerOf(tested, 'Authorization')).toBe(BEARER);
    });

    it('keeps the stored value of one a PUT gives as null (in any case), and sends what the PUT changed from the next delivery on', async () => {
      await deliverOne(webhook, path, 2);
      const kept = await put(webhook.id, { headers: { authorization: null, 'X-Store': 'berlin-2' } });
      expect(await expectJson(kept, 200)).toMatchObject({
        headers: { authorization: null, 'X-Store': 'berlin-2' },
        sensitiveHeaders: ['authorization'],
      });
      const after = await deliverOne(webhook, path, 3);
      expect([headerOf(after, 'Authorization'), headerOf(after, 'X-Api-Key'), headerOf(after, 'X-Store')]).toEqual([
        BEARER,
        undefined,
        'berlin-2',
      ]);

      await expectJson(await put(webhook.id, { headers: { Authorization: 'Bearer rotated', 'X-Store': 'berlin-2' } }), 200);
      expect(headerOf(await deliverOne(webhook, path, 4), 'Authorization')).toBe('Bearer rotated');
      expect(await rowsContaining(t.db, 'Bearer rotated')).toBe(0);
    });

    it('refuses null for a sensitive header with no stored value or for any other header, and an empty credential, changing nothing', async () => {
      const before = (await t.db.query('SELECT * FROM webhooks WHERE id = $1', [webhook.id]))[0];
      await expectError(
        await put(webhook.id, { headers: { Cookie: null } }),
        400,
        /headers: "Cookie" is null, which keeps a stored value, but none is stored/,
      );
      await expectError(await put(webhook.id, { headers: { 'X-Store': null } }), 400, /headers: the value of "X-Store" must be a string/);
      // A form that shows no value and sends back what it shows must not erase the credential.
      await expectError(
        await put(webhook.id, { headers: { Authorization: '', 'X-Store': 'b' } }),
        400,
        /"Authorization" must not be empty/,
      );
      expect((await t.db.query('SELECT * FROM webhooks WHERE id = $1', [webhook.id]))[0]).toEqual(before);
      // Only the endpoints are compared: earlier tests' deliveries may still be retried meanwhile.
      const { webhooks } = await rowCounts(t.db);
      await expectError(
        await t.api('/webhooks', {
          method: 'POST',
          json: { name: 'n', url: `${receiver.url}/new`, events: ['order.created'], headers: { Authorization: null } },
        }),
        400,
        /"Authorization" is null/,
      );
      expect((await rowCounts(t.db)).webhooks).toBe(webhooks);
    });
  });

  describe('limits', () => {
    it('refuses a 1 MB header name with a short 400 naming the field, storing nothing', async () => {
      const counts = await rowCounts(t.db);
      const res = await t.api('/webhooks', {
        method: 'POST',
        json: { name: 'huge', url: `${receiver.url}/huge`, events: ['order.created'], headers: { [`X-${'a'.repeat(1_000_000)}`]: 'v' } },
      });
      const text = await res.clone().text();
      await expectError(res, 400, /headers: the name "X-a+…" must be at most 256 characters \(it has 1000002\)/);
      expect(text.length).toBeLessThan(1_000);
      expect(await rowCounts(t.db)).toEqual(counts);
    });

    it('counts a kept sensitive value in the 8 KiB of an endpoint, and a PUT past it changes nothing', async () => {
      const webhook = await createWebhook(t, `${receiver.url}/full`, ['order.created'], { headers: { 'X-Token': 't'.repeat(1000) } });
      const row = async () => (await t.db.query('SELECT * FROM webhooks WHERE id = $1', [webhook.id]))[0];
      const before = await row();
      // 7 headers of 4 + 1,000 bytes, and the kept token's 7 + 1,000: 8,035 bytes; with an eighth, 9,039.
      const others = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, 'v'.repeat(1000)]));
      await expectError(
        await put(webhook.id, { headers: { 'X-Token': null, ...others(8) } }),
        400,
        'headers: all names and values together must be at most 8192 bytes (these are 9039)',
      );
      expect(await row()).toEqual(before);
      await expectJson(await put(webhook.id, { headers: { 'X-Token': null, ...others(7) } }), 200);
    });
  });

  it('sends nothing but what the endpoint set to an endpoint without headers, and reads none for it', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/plain`);
    expect(await resource(webhook.id)).toMatchObject({ headers: {}, sensitiveHeaders: [] });
    const request = await deliverOne(webhook, '/plain', 5);
    expect(request.headers.authorization).toBeUndefined();
    await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
  });
});

describe('endpoints stored before sensitive values were sealed', () => {
  it('are sealed at the next start, read back as null, and still send their values', async () => {
    const db = await createTestDatabase();
    let t = await startApp({ db });
    const receiver = await Receiver.start();
    try {
      const webhook = await createWebhook(t, `${receiver.url}/legacy`, ['order.created'], { headers: { 'X-Store': 'old' } });
      // As a row written before: the credential in clear in `headers`, and the migration's request to seal it.
      await t.db.query(
        `UPDATE webhooks SET headers = '{"Authorization": "Bearer legacy-7c1e", "X-Store": "old"}', sensitive_headers_encrypted = NULL WHERE id = $1`,
        [webhook.id],
      );
      expect(await resource(t, webhook.id)).toMatchObject({ headers: { Authorization: null, 'X-Store': 'old' } });
      await t.db.query(`INSERT INTO settings (key, value) VALUES ('sensitive_headers_to_seal', 'true')`);
      await t.close();
      t = await startApp({ db });

      expect(await rowsContaining(t.db, 'legacy-7c1e')).toBe(0);
      expect(await t.db.query(`SELECT 1 FROM settings WHERE key = 'sensitive_headers_to_seal'`)).toEqual([]);
      expect(await resource(t, webhook.id)).toMatchObject({
        headers: { Authorization: null, 'X-Store': 'old' },
        sensitiveHeaders: ['Authorization'],
      });
      const event = await publish(t, 'order.created', orderData(1));
      const [request] = await receiver.waitFor(1, (r) => r.path === '/legacy' && r.headers['x-webhook-id'] === event.id);
      expect(request.headers.authorization).toBe('Bearer legacy-7c1e');
    } finally {
      await receiver.close();
      await t.close();
      await db.drop();
    }
  });

  async function resource(t: TestApp, id: string): Promise<Resource> {
    return expectJson<Resource>(await t.api(`/webhooks/${id}`), 200);
  }
});
