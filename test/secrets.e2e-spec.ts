import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SecretCipher } from '../src/webhooks/secret-cipher';
import { KEY_CHECK_SETTING } from '../src/webhooks/secret-key-check';
import { ADMIN_KEY, TEST_ENCRYPTION_KEY } from './support/app';
import { ChildApp } from './support/child-app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { rowsContaining } from './support/expectations';
import { orderData } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * Secrets: a full scenario against Hookline running as a child
 * process with LOG_LEVEL=debug, so that its whole stdout and stderr (pino's JSON lines, Nest's
 * bootstrap, anything printed) is captured in a file, plus every API answer, body and headers.
 * No signing secret and no API key text may appear anywhere except in the one answer that shows
 * it: webhook create and rotate-secret for secrets, key creation for keys. In the database the
 * secrets are sealed: no column holds a secret in any encoding, and only SECRET_ENCRYPTION_KEY
 * opens them.
 */

interface Captured {
  label: string;
  text: string;
}

describe('secrets never leak (LOG_LEVEL=debug, child process)', () => {
  let db: TestDatabase;
  let app: ChildApp;
  let receiver: Receiver;
  const answers: Captured[] = [];
  /** Secret or key text → the label of the only answer allowed to carry it. */
  const shownOnceIn = new Map<string, string>();
  const secrets: Array<{ webhookId: string; secret: string }> = [];
  const liveKeys: string[] = [];
  let log = '';

  /** fetch with capture of the whole answer (status line, headers, body). */
  async function call(
    label: string,
    path: string,
    init: { method?: string; key?: string | null; json?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const headers = new Headers(init.headers);
    if (init.key !== null) headers.set('X-API-Key', init.key ?? ADMIN_KEY);
    if (init.json !== undefined || init.raw !== undefined) headers.set('Content-Type', 'application/json');
    const res = await fetch(`${app.baseUrl}/api/v1/external${path}`, {
      method: init.method ?? 'GET',
      headers,
      body: init.raw ?? (init.json === undefined ? undefined : JSON.stringify(init.json)),
    });
    const text = await res.text();
    answers.push({ label, text: `${res.status}\n${JSON.stringify([...res.headers])}\n${text}` });
    return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }

  beforeAll(async () => {
    receiver = await Receiver.start();
    // A receiver that answers with everything it got, headers included, into the attempt log.
    receiver.respondWith((request, res) => {
      const echo = JSON.stringify({ headers: request.headers, body: request.body.toString('utf8') });
      res.writeHead(request.path.endsWith('/fail') ? 500 : 200, { 'content-type': 'application/json' }).end(echo);
    });
    db = await createTestDatabase();
    app = await ChildApp.start({
      databaseUrl: db.url,
      name: 'secrets',
      env: { LOG_LEVEL: 'debug', RETRY_SCHEDULE_MS: '0,50', RATE_LIMIT_PER_MINUTE: '0' },
    });

    // Platform administration: a store and its first key; a second key in st_default.
    const store = await call('create store', '/stores', { method: 'POST', json: { name: 'Secretive' } });
    const storeKey = await call('create key in store', `/stores/${String(store.body.id)}/api-keys`, {
      method: 'POST',
      json: { name: 'store admin', scopes: ['webhooks:read', 'webhooks:write', 'events:write', 'api-keys:write'] },
    });
    const key1 = String(storeKey.body.key);
    shownOnceIn.set(key1, 'create key in store');
    const reader = await call('create reader key', '/api-keys', {
      method: 'POST',
      key: key1,
      json: { name: 'reader', scopes: ['webhooks:read'] },
    });
    const key2 = String(reader.body.key);
    shownOnceIn.set(key2, 'create reader key');
    const spare = await call('create spare key', '/api-keys', { method: 'POST', json: { name: 'spare', scopes: ['events:write'] } });
    const key3 = String(spare.body.key);
    shownOnceIn.set(key3, 'create spare key');
    liveKeys.push(key1, key3);

    // Endpoints: one that answers 200, one that fails (and echoes the request into the log).
    const hooks: string[] = [];
    for (const tail of ['ok', 'fail']) {
      const label = `create webhook ${tail}`;
      const created = await call(label, '/webhooks', {
        method: 'POST',
        key: key1,
        json: { name: `hook ${tail}`, url: `${receiver.url}/${tail}`, events: ['order.created'] },
      });
      expect(created.status).toBe(201);
      secrets.push({ webhookId: String(created.body.id), secret: String(created.body.secret) });
      shownOnceIn.set(String(created.body.secret), label);
      hooks.push(String(created.body.id));
    }

    // Deliveries (two attempts on the failing one), then every read there is.
    const published = await call('publish', '/events', { method: 'POST', key: key1, json: { type: 'order.created', data: orderData(1) } });
    await call('publish (key 3)', '/events', { method: 'POST', key: key3, json: { type: 'order.created', data: orderData(2) } });
    await eventually(
      async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`))[0].n,
      (pending) => pending === 0,
      { what: 'deliveries to settle' },
    );
    for (const id of hooks) {
      await call('get webhook', `/webhooks/${id}`, { key: key2 });
      const log = await call('list deliveries', `/webhooks/${id}/deliveries`, { key: key2 });
      for (const delivery of log.body.data as Array<{ id: string }>)
        await call('get delivery', `/deliveries/${delivery.id}`, { key: key2 });
    }
    await call('list webhooks', '/webhooks', { key: key2 });
    await call('get event', `/events/${String(published.body.id)}`, { key: key2 });
    await call('list keys', '/api-keys', { key: key1 });
    await call('list keys (admin)', '/api-keys');
    await call('list stores', '/stores');

    // Test sends, a rotation, and a test with the new secret.
    await call('test', `/webhooks/${hooks[0]}/test`, { method: 'POST', key: key1 });
    const rotated = await call('rotate', `/webhooks/${hooks[0]}/rotate-secret`, { method: 'POST', key: key1 });
    secrets.push({ webhookId: hooks[0], secret: String(rotated.body.secret) });
    shownOnceIn.set(String(rotated.body.secret), 'rotate');
    await call('test after rotation', `/webhooks/${hooks[0]}/test`, { method: 'POST', key: key1 });
    await call('update', `/webhooks/${hooks[1]}`, { method: 'PUT', key: key1, json: { name: 'renamed' } });

    // Refusals and misuse: wrong scope, keys where they do not belong, a revoked key.
    await call('wrong scope', '/webhooks', {
      method: 'POST',
      key: key2,
      json: { name: 'x', url: `${receiver.url}/x`, events: ['order.created'] },
    });
    await call('key with a typo', '/webhooks', { key: `${key1}x` });
    await call('key as bearer token', '/webhooks', { key: null, headers: { Authorization: `Bearer ${key1}` } });
    await call('key in the query string', `/webhooks?api_key=${encodeURIComponent(key1)}&token=${encodeURIComponent(key2)}`, { key: key1 });
    await call('bad body', '/webhooks', {
      method: 'POST',
      key: key1,
      json: { name: 'x', url: 'ftp://nope', events: ['nope'], secret: 'whsec_mine' },
    });
    await call('malformed JSON', '/webhooks', { method: 'POST', key: key1, raw: `{"name":"x","secret":"whsec_mine",` });
    await call('body over 1 MiB', '/events', {
      method: 'POST',
      key: key1,
      raw: JSON.stringify({ type: 'order.created', data: { pad: 'x'.repeat(1_100_000) } }),
    });
    await call('revoke', `/api-keys/${String(reader.body.id)}`, { method: 'DELETE', key: key1 });
    await call('revoked key', '/webhooks', { key: key2 });
    await call('not found', '/webhooks/wh_00000000000000000000000000', { key: key1 });

    // Stop cleanly, so that the log file holds every line.
    await app.kill('SIGTERM');
    expect(await app.waitForExit(30_000)).toEqual({ code: 0, signal: null });
    log = readFileSync(app.logFile, 'utf8');
  }, 90_000);

  afterAll(async () => {
    await ChildApp.killAll();
    await receiver?.close();
    await db?.drop();
  });

  it('logged plenty (so that the grep below means something): startup, every request, the refusals', () => {
    const lines = log.split('\n').filter((line) => line.trim() !== '');
    console.log(
      `[secrets] ${lines.length} log lines, ${log.length} bytes; ${answers.length} answers captured; ${shownOnceIn.size} secrets and keys tracked`,
    );
    expect(lines.length).toBeGreaterThan(answers.length + 40);
    expect(lines.filter((line) => line.includes('"msg":"request completed"')).length).toBeGreaterThanOrEqual(answers.length);
    // One line per answer, found by the X-Request-Id it carried: refusals by the body parser
    // (malformed JSON, 413) included.
    const completed = new Map<string, number>();
    for (const line of lines.filter((text) => text.includes('"msg":"request completed"'))) {
      const { req, res } = JSON.parse(line) as { req: { id: string }; res: { statusCode: number } };
      completed.set(req.id, res.statusCode);
    }
    for (const answer of answers) {
      const [status, headers] = answer.text.split('\n');
      const id = (JSON.parse(headers) as Array<[string, string]>).find(([name]) => name === 'x-request-id')?.[1];
      expect({ label: answer.label, logged: id === undefined ? undefined : completed.get(id) }).toEqual({
        label: answer.label,
        logged: Number(status),
      });
    }
    // A key put in the URL by mistake is logged without its value; the API's own parameters stay.
    expect(log).toContain('/api/v1/external/webhooks?api_key=[redacted]&token=[redacted]');
  });

  /** The forms a secret or key could leak in: as is, its random part, and that part re-encoded. */
  function forms(text: string): string[] {
    const random = text.replace(/^(whsec|hlk|hl)_/, '');
    const bytes = Buffer.from(random, 'base64url');
    return [text, random, bytes.toString('base64'), bytes.toString('hex'), Buffer.from(text).toString('base64')];
  }

  it('never writes a signing secret, an API key or the encryption key to the log', () => {
    const tracked = [...shownOnceIn.keys(), ADMIN_KEY, TEST_ENCRYPTION_KEY];
    for (const text of tracked) {
      for (const form of forms(text)) expect({ text, found: log.includes(form) }).toEqual({ text, found: false });
    }
  });

  it('shows each secret and each key in exactly one answer: the one that created (or rotated) it', () => {
    for (const [text, label] of shownOnceIn) {
      const carriers = answers.filter((answer) => forms(text).some((form) => answer.text.includes(form))).map((answer) => answer.label);
      expect({ text: text.slice(0, 10), carriers }).toEqual({ text: text.slice(0, 10), carriers: [label] });
    }
    for (const form of forms(ADMIN_KEY)) expect(answers.filter((answer) => answer.text.includes(form))).toEqual([]);
    // What the deliveries carried (signatures, the echo of the request) is no secret either.
    expect(receiver.requests.length).toBeGreaterThanOrEqual(4);
    for (const request of receiver.requests) {
      const wire = JSON.stringify(request.headers) + request.body.toString('utf8');
      for (const { secret } of secrets) expect(wire).not.toContain(secret);
    }
  });

  it('stores no secret and no key in any readable form in the database', async () => {
    for (const text of [...shownOnceIn.keys(), ADMIN_KEY]) {
      for (const form of forms(text))
        expect({ form: form.slice(0, 12), rows: await rowsContaining(db, form) }).toEqual({ form: form.slice(0, 12), rows: 0 });
    }
    // Keys are there as their SHA-256 only (the revoked one not at all).
    const hashes = (await db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys')).map((row) => row.key_hash);
    for (const text of liveKeys) expect(hashes).toContain(createHash('sha256').update(text).digest('hex'));
    // SECRET_ENCRYPTION_KEY itself is stored nowhere: settings holds only a known text sealed with it.
    expect(await db.query(`SELECT key, value ~ '^v1\\.' AS sealed FROM settings WHERE key LIKE '%encryption%'`)).toEqual([
      { key: KEY_CHECK_SETTING, sealed: true },
    ]);
    for (const form of forms(TEST_ENCRYPTION_KEY)) expect(await rowsContaining(db, form)).toBe(0);
  });

  it('opens the sealed secrets only with SECRET_ENCRYPTION_KEY and only on their own row', async () => {
    const rows = await db.query<{ id: string; secret_encrypted: string }>('SELECT id, secret_encrypted FROM webhooks');
    expect(rows).toHaveLength(2);
    const right = new SecretCipher(Buffer.from(TEST_ENCRYPTION_KEY, 'base64'));
    const wrong = new SecretCipher(randomBytes(32));
    const current = new Map<string, string>();
    for (const { webhookId, secret } of secrets) current.set(webhookId, secret); // the rotated one last
    for (const row of rows) {
      expect(row.secret_encrypted).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(right.decrypt(row.secret_encrypted, row.id)).toBe(current.get(row.id));
      expect(() => wrong.decrypt(row.secret_encrypted, row.id)).toThrow();
      // The row id is bound in: a ciphertext copied onto another row does not open.
      const other = rows.find((candidate) => candidate.id !== row.id)!;
      expect(() => right.decrypt(row.secret_encrypted, other.id)).toThrow();
    }
  });
});
