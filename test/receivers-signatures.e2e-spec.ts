import { Webhook } from 'standardwebhooks';
import type { IncomingHttpHeaders } from 'node:http';
import { verifyWebhook } from '../src/receiver/verify-webhook';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { expectError, expectJson, ISO_MS, rowCounts, SECRET } from './support/expectations';
import { createWebhook, CreatedWebhook, delivery, deliveriesOf, orderData, publish } from './support/fixtures';
import { ReceivedRequest, Receiver } from './support/receiver';

/**
 * What a receiver sees of the signatures and of an endpoint's own headers, checked the way a
 * receiver checks them: the Standard Webhooks headers with the `standardwebhooks` reference
 * library, the X-Webhook-* headers with the project's verify helper.
 */

/** The request's headers as the Standard Webhooks library takes them. */
function headersOf(request: ReceivedRequest): Record<string, string> {
  return request.headers as Record<string, string>;
}

/** Whether `webhook-*` verifies with `secret` (the Standard Webhooks library, decoded-secret key). */
function standardVerifies(secret: string, request: ReceivedRequest): boolean {
  try {
    new Webhook(secret).verify(request.body, headersOf(request));
    return true;
  } catch {
    return false;
  }
}

/**
 * The request's headers without the Standard Webhooks set: verifyWebhook accepts either set, so
 * this is how it judges X-Webhook-Signature alone.
 */
function seedHeadersOf(request: ReceivedRequest): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(request.headers).filter(([name]) => !name.startsWith('webhook-')));
}

/** Whether `X-Webhook-*` verifies with `secret` (the project's helper, whole-string key). */
function seedVerifies(secret: string, request: ReceivedRequest): boolean {
  try {
    verifyWebhook(secret, seedHeadersOf(request), request.body);
    return true;
  } catch {
    return false;
  }
}

interface WebhookResource {
  id: string;
  secret?: string;
  secretRotation: { oldSecretExpiresAt: string } | null;
}

describe('signatures a receiver verifies (both header sets, RETRY_SCHEDULE_MS=0,200,200)', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,200' } });
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  afterEach(() => receiver.respondStatus(200, '{"received":true}'));

  /**
   * Answers 500 to the first request of each event on `path` and 200 to the next, so every
   * delivery there has a retry (every endpoint of the store subscribes to order.created).
   */
  function failFirstAttemptOn(path: string): void {
    const seen = new Set<string>();
    receiver.respondWith((request, res) => {
      if (request.path !== path) return res.writeHead(200).end();
      const id = String(request.headers['webhook-id']);
      res.writeHead(seen.has(id) ? 200 : 500).end();
      seen.add(id);
    });
  }

  async function rotate(webhookId: string, oldSecretExpiresInSeconds?: number): Promise<WebhookResource & { secret: string }> {
    const json = oldSecretExpiresInSeconds === undefined ? undefined : { oldSecretExpiresInSeconds };
    const body = await expectJson<WebhookResource>(await t.api(`/webhooks/${webhookId}/rotate-secret`, { method: 'POST', json }), 200);
    expect(body.secret).toMatch(SECRET);
    return body as WebhookResource & { secret: string };
  }

  async function resource(webhookId: string): Promise<WebhookResource> {
    return expectJson<WebhookResource>(await t.api(`/webhooks/${webhookId}`), 200);
  }

  async function previousSecretColumns(webhookId: string): Promise<{ sealed: string | null; expiresAt: Date | null }> {
    const [row] = await t.db.query<{ sealed: string | null; expiresAt: Date | null }>(
      'SELECT previous_secret_encrypted AS sealed, previous_secret_expires_at AS "expiresAt" FROM webhooks WHERE id = $1',
      [webhookId],
    );
    return row;
  }

  /** Publishes one event and waits for its first request on `path` to be answered 2xx (or its delivery to end). */
  async function deliverOne(webhook: CreatedWebhook, path: string, n: number): Promise<ReceivedRequest[]> {
    const event = await publish(t, 'order.created', orderData(n));
    const [row] = await eventually(
      () => deliveriesOf(t, webhook.id, '?limit=1'),
      (rows) => rows[0]?.eventId === event.id && rows[0].status !== 'pending',
      { what: `delivery of ${event.id}` },
    );
    expect(row.status).toBe('succeeded');
    return receiver.to(path).filter((request) => request.headers['webhook-id'] === event.id);
  }

  describe('Standard Webhooks headers beside X-Webhook-*', () => {
    it('signs every attempt, retries included, so that the standardwebhooks library and verifyWebhook both accept it', async () => {
      const path = '/standard';
      const webhook = await createWebhook(t, `${receiver.url}${path}`);
      failFirstAttemptOn(path);
      const events = [await publish(t, 'order.created', orderData(1)), await publish(t, 'order.created', orderData(2))];
      const requests = await receiver.waitFor(4, (r) => r.path === path);

      for (const event of events) {
        const attempts = requests.filter((r) => r.headers['x-webhook-id'] === event.id);
        expect(attempts).toHaveLength(2);
        for (const request of attempts) {
          expect(request.headers['webhook-id']).toBe(event.id);
          const seconds = request.headers['webhook-timestamp'] as string;
          expect(seconds).toMatch(/^\d{10}$/);
          expect(Number(seconds)).toBe(Math.floor(Number(request.headers['x-webhook-timestamp']) / 1000));
          expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
          // The reference library: key = the bytes after whsec_, base64-decoded.
          expect(new Webhook(webhook.secret).verify(request.body, headersOf(request))).toEqual(JSON.parse(request.body.toString('utf8')));
          // The same delivery carries the X-Webhook-* set, keyed with the whole secret string.
          expect(verifyWebhook(webhook.secret, seedHeadersOf(request), request.body).id).toBe(event.id);
        }
      }
      // A receiver holding another secret accepts none of them.
      const other = (await createWebhook(t, `${receiver.url}/other`)).secret;
      expect(requests.map((r) => [standardVerifies(other, r), seedVerifies(other, r)])).toEqual(requests.map(() => [false, false]));
      const rows = await eventually(
        () => deliveriesOf(t, webhook.id),
        (list) => list.every((row) => row.status === 'succeeded'),
      );
      expect(rows.map((row) => row.attemptCount)).toEqual([2, 2]);
    });

    it('signs the endpoint test delivery with both sets too', async () => {
      const webhook = await createWebhook(t, `${receiver.url}/tested`);
      const result = await expectJson<{ success: boolean; eventId: string }>(
        await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' }),
        200,
      );
      expect(result.success).toBe(true);
      const [request] = receiver.to('/tested');
      expect(new Webhook(webhook.secret).verify(request.body, headersOf(request))).toMatchObject({
        id: result.eventId,
        type: 'webhook.test',
      });
      expect(verifyWebhook(webhook.secret, seedHeadersOf(request), request.body).id).toBe(result.eventId);
    });
  });

  describe('rotation with an overlap', () => {
    it('keeps the old secret verifying every delivery while the new one verifies webhook-signature, and shows the overlap', async () => {
      const path = '/rotating';
      const webhook = await createWebhook(t, `${receiver.url}${path}`);
      const oldSecret = webhook.secret;
      const asked = Date.now();
      const rotated = await rotate(webhook.id, 60);
      const newSecret = rotated.secret;
      expect(newSecret).not.toBe(oldSecret);
      const expiresAt = Date.parse(rotated.secretRotation!.oldSecretExpiresAt);
      expect(rotated.secretRotation!.oldSecretExpiresAt).toMatch(ISO_MS);
      expect(expiresAt).toBeGreaterThanOrEqual(asked + 60_000 - 1_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60_000 + 1_000);
      expect((await resource(webhook.id)).secretRotation).toEqual(rotated.secretRotation);
      const listed = await expectJson<{ data: WebhookResource[] }>(await t.api('/webhooks?limit=200'), 200);
      expect(listed.data.find((w) => w.id === webhook.id)!.secretRotation).toEqual(rotated.secretRotation);

      failFirstAttemptOn(path);
      await publish(t, 'order.created', orderData(10));
      await publish(t, 'order.created', orderData(11));
      await publish(t, 'order.created', orderData(12));
      const requests = await receiver.waitFor(6, (r) => r.path === path);
      expect(requests).toHaveLength(6);
      expect(requests.map((r) => (r.headers['webhook-signature'] as string).split(' ').length)).toEqual([2, 2, 2, 2, 2, 2]);
      // [old: X-Webhook-Signature, old: webhook-signature, new: webhook-signature, new: X-Webhook-Signature]
      expect(
        requests.map((r) => [
          seedVerifies(oldSecret, r),
          standardVerifies(oldSecret, r),
          standardVerifies(newSecret, r),
          seedVerifies(newSecret, r),
        ]),
      ).toEqual(requests.map(() => [true, true, true, false]));
      // A receiver that has switched verifies with the helper given the new secret alone, or both.
      for (const request of requests) {
        expect(verifyWebhook(newSecret, request.headers, request.body).id).toBe(request.headers['webhook-id']);
        expect(verifyWebhook([newSecret, oldSecret], request.headers, request.body).id).toBe(request.headers['webhook-id']);
      }
    });

    it('erases the old secret after N = 2 seconds: from then on only the new one verifies', async () => {
      const path = '/overlap-ends';
      const webhook = await createWebhook(t, `${receiver.url}${path}`);
      const oldSecret = webhook.secret;
      const asked = Date.now();
      const rotated = await rotate(webhook.id, 2);
      const newSecret = rotated.secret;
      expect(rotated.secretRotation).toEqual({ oldSecretExpiresAt: expect.stringMatching(ISO_MS) });
      const expiresAt = Date.parse(rotated.secretRotation!.oldSecretExpiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(asked + 2_000 - 5);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 2_000);
      expect((await previousSecretColumns(webhook.id)).sealed).not.toBeNull();

      const [during] = await deliverOne(webhook, path, 20);
      expect(during.at).toBeLessThan(expiresAt);
      expect([seedVerifies(oldSecret, during), standardVerifies(oldSecret, during), standardVerifies(newSecret, during)]).toEqual([
        true,
        true,
        true,
      ]);

      // The sweeper erases it about a second after it ends, not before.
      const erased = await eventually(
        () => previousSecretColumns(webhook.id),
        (row) => row.sealed === null,
        { deadlineMs: 6_000, what: 'previous_secret_encrypted erased' },
      );
      expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
      expect(erased).toEqual({ sealed: null, expiresAt: null });
      expect((await resource(webhook.id)).secretRotation).toBeNull();

      const [after] = await deliverOne(webhook, path, 21);
      expect(after.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect([
        seedVerifies(oldSecret, after),
        standardVerifies(oldSecret, after),
        standardVerifies(newSecret, after),
        seedVerifies(newSecret, after),
      ]).toEqual([false, false, true, true]);
    });

    it('stops the old secret at once with N = 0 (and without a body)', async () => {
      for (const [n, overlap] of [
        [30, 0],
        [31, undefined],
      ] as const) {
        const path = `/no-overlap-${n}`;
        const webhook = await createWebhook(t, `${receiver.url}${path}`);
        const rotated = await rotate(webhook.id, overlap);
        expect(rotated.secretRotation).toBeNull();
        expect(await previousSecretColumns(webhook.id)).toEqual({ sealed: null, expiresAt: null });

        const [request] = await deliverOne(webhook, path, n);
        expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
        expect([
          seedVerifies(webhook.secret, request),
          standardVerifies(webhook.secret, request),
          standardVerifies(rotated.secret, request),
          seedVerifies(rotated.secret, request),
        ]).toEqual([false, false, true, true]);
      }
    });

    it('ends the first overlap when a second rotation comes during it: the first old secret no longer verifies', async () => {
      const path = '/rotated-twice';
      const webhook = await createWebhook(t, `${receiver.url}${path}`);
      const first = webhook.secret;
      const second = (await rotate(webhook.id, 600)).secret;
      const thirdRotation = await rotate(webhook.id, 60);
      const third = thirdRotation.secret;
      const expiresAt = Date.parse(thirdRotation.secretRotation!.oldSecretExpiresAt);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60_000 + 1_000);
      expect((await resource(webhook.id)).secretRotation).toEqual(thirdRotation.secretRotation);

      const [request] = await deliverOne(webhook, path, 40);
      expect((request.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
      expect({
        first: [seedVerifies(first, request), standardVerifies(first, request)],
        second: [seedVerifies(second, request), standardVerifies(second, request)],
        third: [seedVerifies(third, request), standardVerifies(third, request)],
      }).toEqual({ first: [false, false], second: [true, true], third: [false, true] });
    });
  });

  describe('per-endpoint headers', () => {
    /** 20 headers, the most allowed, one of them 1 KiB long. */
    const headers: Record<string, string> = {
      Authorization: 'Bearer 9f8e7d',
      'X-Store': 'berlin-1',
      'X-Long': 'a'.repeat(1024),
      ...Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`X-Extra-${i}`, `value ${i} !#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`])),
    };

    function carries(request: ReceivedRequest, expected: Record<string, string>): Record<string, string | undefined> {
      return Object.fromEntries(Object.keys(expected).map((name) => [name, request.headers[name.toLowerCase()] as string | undefined]));
    }

    it('sends the endpoint headers on every attempt, retries included, and on the endpoint test', async () => {
      expect(Object.keys(headers)).toHaveLength(20);
      const path = '/with-headers';
      const webhook = await createWebhook(t, `${receiver.url}${path}`, ['order.created'], { headers });
      // Authorization's value is sent, never read back.
      expect(await resource(webhook.id)).toMatchObject({
        headers: { ...headers, Authorization: null },
        sensitiveHeaders: ['Authorization'],
      });
      receiver.respondStatus(500);
      const event = await publish(t, 'order.created', orderData(50));
      const attempts = await receiver.waitFor(3, (r) => r.path === path);
      expect(attempts.map((r) => r.headers['x-webhook-id'])).toEqual([event.id, event.id, event.id]);
      for (const request of attempts) {
        expect(carries(request, headers)).toEqual(headers);
        // Beside, not instead of, what Hookline sets.
        expect(request.headers['content-type']).toBe('application/json');
        expect(verifyWebhook(webhook.secret, request.headers, request.body).id).toBe(event.id);
      }
      await eventually(
        () => deliveriesOf(t, webhook.id),
        (rows) => rows[0]?.status === 'failed' && rows[0].attemptCount === 3,
      );

      receiver.respondStatus(200);
      const result = await expectJson<{ success: boolean; eventId: string }>(
        await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' }),
        200,
      );
      expect(result.success).toBe(true);
      const tested = receiver.to(path).find((r) => r.headers['x-webhook-id'] === result.eventId)!;
      expect(carries(tested, headers)).toEqual(headers);
    });

    it('sends the headers a PUT set from the next delivery on, and none of the ones it replaced', async () => {
      const path = '/headers-changed';
      const webhook = await createWebhook(t, `${receiver.url}${path}`, ['order.created'], { headers: { 'X-Old': 'old' } });
      const replaced = { 'X-New': 'new', authorization: 'Basic dXNlcjpwYXNz' };
      expect(await expectJson(await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { headers: replaced } }), 200)).toMatchObject({
        headers: { ...replaced, authorization: null },
        sensitiveHeaders: ['authorization'],
      });
      const [request] = await deliverOne(webhook, path, 51);
      expect(carries(request, replaced)).toEqual(replaced);
      expect(request.headers['x-old']).toBeUndefined();
    });

    const forbidden = [
      'Content-Type',
      'content-type',
      'Content-Length',
      'Content-Encoding',
      'Host',
      'HOST',
      'User-Agent',
      'Connection',
      'Keep-Alive',
      'Transfer-Encoding',
      'TE',
      'Trailer',
      'Upgrade',
      'Expect',
      'Proxy-Authorization',
      'Proxy-Connection',
      'X-Webhook-Signature',
      'X-Webhook-ID',
      'x-webhook-timestamp',
      'X-Webhook-Anything',
      'webhook-id',
      'Webhook-Signature',
      'webhook-timestamp',
    ];

    const badValues: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a CR LF in a value', { 'X-Split': 'a\r\nX-Injected: 1' }, /"X-Split".*printable ASCII/],
      ['a LF in a value', { 'X-Split': 'a\nb' }, /"X-Split".*printable ASCII/],
      ['a tab in a value', { 'X-Tab': 'a\tb' }, /"X-Tab".*printable ASCII/],
      ['a non-ASCII value', { 'X-Accent': 'café' }, /"X-Accent".*printable ASCII/],
      ['a value over 1 KiB', { 'X-Long': 'a'.repeat(1025) }, /"X-Long".*at most 1024/],
      ['a number value', { 'X-Number': 42 }, /"X-Number".*must be a string/],
      ['a null value', { 'X-Null': null }, /"X-Null".*must be a string/],
      ['an object value', { 'X-Object': { a: 'b' } }, /"X-Object".*must be a string/],
      ['an array value', { 'X-Array': ['a'] }, /"X-Array".*must be a string/],
      ['a name with a space', { 'X Bad': 'v' }, /"X Bad".*not a valid header name/],
      ['a name with a colon', { 'X-Bad:': 'v' }, /"X-Bad:".*not a valid header name/],
      ['a non-ASCII name', { 'X-Naïve': 'v' }, /"X-Naïve".*not a valid header name/],
      ['an empty name', { '': 'v' }, /"".*not a valid header name/],
      ['one name twice in two cases', { 'X-Token': 'a', 'x-token': 'b' }, /"x-token".*twice/],
      ['21 headers', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])), /headers must have at most 20 entries/],
      ['a name over 256 characters', { [`X-${'n'.repeat(255)}`]: 'v' }, /the name "X-n+…" must be at most 256 characters \(it has 257\)/],
      [
        'names and values over 8 KiB together',
        Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`X-H${i}`, 'v'.repeat(1000)])),
        /headers: all names and values together must be at most 8192 bytes \(these are 9036\)/,
      ],
      [
        'a sensitive header null with no value stored',
        { Authorization: null },
        /"Authorization" is null, which keeps a stored value, but none is stored/,
      ],
    ];

    const notAnObject: Array<[string, unknown]> = [
      ['a string', 'X-Token: 1'],
      ['an array', [['X-Token', '1']]],
      ['null', null],
    ];

    it.each(forbidden)('refuses %s as a header name on create and on PUT, naming it, and stores nothing', async (name) => {
      const message = new RegExp(
        `headers: "${name}" is (set by Hookline or the connection|reserved for the signature headers) and cannot be set`,
      );
      await expectRefused({ [name]: 'value' }, message);
    });

    it.each(badValues)('refuses %s on create and on PUT, naming the header, and stores nothing', async (_case, value, message) => {
      await expectRefused(value, message);
    });

    it.each(notAnObject)('refuses headers given as %s', async (_case, value) => {
      await expectRefused(value, /headers must be an object of header names to string values/);
    });

    let target: CreatedWebhook | undefined;

    /** A refused create changes no table; a refused PUT leaves the endpoint's headers as they were. */
    async function expectRefused(value: unknown, message: RegExp): Promise<void> {
      target ??= await createWebhook(t, `${receiver.url}/kept`, ['order.created'], { headers: { 'X-Kept': 'kept' } });
      const before = await rowCounts(t.db);
      await expectError(
        await t.api('/webhooks', {
          method: 'POST',
          json: { name: 'refused', url: `${receiver.url}/refused`, events: ['order.created'], headers: value },
        }),
        400,
        message,
      );
      expect(await rowCounts(t.db)).toEqual(before);
      const row = async () => (await t.db.query('SELECT headers, updated_at FROM webhooks WHERE id = $1', [target!.id]))[0];
      const stored = await row();
      await expectError(await t.api(`/webhooks/${target.id}`, { method: 'PUT', json: { headers: value } }), 400, message);
      expect(await row()).toEqual(stored);
      expect(stored.headers).toEqual({ 'X-Kept': 'kept' });
    }

    it('adds nothing to what Hookline sends for an endpoint without headers', async () => {
      const webhook = await createWebhook(t, `${receiver.url}/plain`);
      expect(await resource(webhook.id)).toMatchObject({ headers: {} });
      await expectJson(await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' }), 200);
      const [request] = receiver.to('/plain');
      expect(Object.keys(request.headers).sort()).toEqual(
        [
          'connection',
          'content-length',
          'content-type',
          'host',
          'user-agent',
          'webhook-id',
          'webhook-signature',
          'webhook-timestamp',
          'x-webhook-id',
          'x-webhook-signature',
          'x-webhook-timestamp',
        ].sort(),
      );
      const detail = await delivery(t, (await deliveriesOf(t, webhook.id))[0].id);
      expect(detail.status).toBe('succeeded');
    });
  });
});

describe.each([
  ['standard', ['webhook-id', 'webhook-signature', 'webhook-timestamp'], ['x-webhook-id', 'x-webhook-signature', 'x-webhook-timestamp']],
  ['seed', ['x-webhook-id', 'x-webhook-signature', 'x-webhook-timestamp'], ['webhook-id', 'webhook-signature', 'webhook-timestamp']],
])('SIGNATURE_HEADERS=%s', (setting, sent, absent) => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ env: { SIGNATURE_HEADERS: setting } });
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it(`sends only the ${setting} set, and it verifies`, async () => {
    const webhook = await createWebhook(t, `${receiver.url}/only`, ['order.created'], { headers: { 'X-Store': 'berlin-1' } });
    const event = await publish(t, 'order.created', orderData(1));
    const test = await expectJson<{ success: boolean; eventId: string }>(
      await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' }),
      200,
    );
    expect(test.success).toBe(true);
    const requests = await receiver.waitFor(2);
    expect(new Set(requests.map((r) => r.headers[sent[0]]))).toEqual(new Set([event.id, test.eventId]));
    for (const request of requests) {
      const names = Object.keys(request.headers);
      expect(names).toEqual(expect.arrayContaining([...sent, 'content-type', 'user-agent', 'x-store']));
      for (const name of absent) expect(names).not.toContain(name);
      expect([standardVerifies(webhook.secret, request), seedVerifies(webhook.secret, request)]).toEqual(
        setting === 'standard' ? [true, false] : [false, true],
      );
    }
  });
});
