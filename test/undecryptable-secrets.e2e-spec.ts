import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { verifyWebhook } from '../src/receiver/verify-webhook';
import { SecretCipher } from '../src/webhooks/secret-cipher';
import { KEY_CHECK_SETTING } from '../src/webhooks/secret-key-check';
import { startApp, TestApp } from './support/app';
import { ChildApp } from './support/child-app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { expectJson } from './support/expectations';
import { createWebhook, delivery, deliveriesOf, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * A signing secret that the configured SECRET_ENCRYPTION_KEY cannot decrypt (written under another
 * key): each attempt fails without a request and says why, the delivery follows its schedule to
 * `failed`, and the endpoint's health is not touched (the fault is the key, not the receiver).
 * Thresholds so low that one counted failure would show in endpoint_health at once.
 */
describe('a delivery whose signing secret cannot be decrypted', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({
      env: { RETRY_SCHEDULE_MS: '0,50,50', ENDPOINT_DISABLE_AFTER_MS: '1s', ENDPOINT_DISABLE_MIN_FAILURES: '1' },
    });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('fails each attempt without a request, ends failed by its schedule, and leaves the endpoint’s health alone', async () => {
    const unreadable = await createWebhook(t, `${receiver.url}/unreadable`);
    const healthy = await createWebhook(t, `${receiver.url}/healthy`);
    const otherKey = new SecretCipher(randomBytes(32));
    await t.db.query('UPDATE webhooks SET secret_encrypted = $1 WHERE id = $2', [
      otherKey.encrypt('whsec_written_elsewhere', unreadable.id),
      unreadable.id,
    ]);

    const event = await publish(t, 'order.created', orderData(1));
    const [pending] = await deliveriesOf(t, unreadable.id);
    const failed = await eventually(
      () => delivery(t, pending.id),
      (d) => d.status !== 'pending',
      { what: 'the unreadable endpoint’s delivery to end' },
    );

    expect(failed).toMatchObject({ status: 'failed', attemptCount: 3, lastStatusCode: null });
    expect(failed.lastError).toMatch(/cannot be decrypted with the configured SECRET_ENCRYPTION_KEY/);
    expect(failed.attempts).toHaveLength(3);
    for (const attempt of failed.attempts!) expect(attempt).toMatchObject({ statusCode: null, error: failed.lastError });
    // The other endpoint got the event; the unreadable one got nothing.
    await eventually(
      async () => receiver.requests.filter((r) => r.path === '/healthy').length,
      (n) => n === 1,
    );
    expect(receiver.requests.filter((r) => r.path === '/unreadable')).toEqual([]);
    expect(verifyWebhook(healthy.secret, receiver.requests[0].headers, receiver.requests[0].body)).toMatchObject({ id: event.id });

    expect(await expectJson(await t.api(`/webhooks/${unreadable.id}`), 200)).toMatchObject({ isActive: true, disabledReason: null });
    expect(await t.db.query('SELECT failures FROM endpoint_health WHERE webhook_id = $1 AND failures > 0', [unreadable.id])).toEqual([]);
  });

  it('delivers again, signed, once the endpoint’s secret is rotated, even while the old one overlaps', async () => {
    const endpoint = await createWebhook(t, `${receiver.url}/rotated`);
    const otherKey = new SecretCipher(randomBytes(32));
    await t.db.query('UPDATE webhooks SET secret_encrypted = $1 WHERE id = $2', [
      otherKey.encrypt('whsec_written_elsewhere', endpoint.id),
      endpoint.id,
    ]);
    await publish(t, 'order.created', orderData(2));
    const [stuck] = await deliveriesOf(t, endpoint.id);
    await eventually(
      () => delivery(t, stuck.id),
      (d) => d.status === 'failed',
    );

    const rotated = await expectJson<{ secret: string }>(
      await t.api(`/webhooks/${endpoint.id}/rotate-secret`, { method: 'POST', json: { oldSecretExpiresInSeconds: 3600 } }),
      200,
    );
    expect((await t.api(`/deliveries/${stuck.id}/retry`, { method: 'POST' })).status).toBe(202);
    const request = await eventually(
      async () => receiver.requests.find((r) => r.path === '/rotated'),
      (r) => r !== undefined,
    );
    expect(verifyWebhook(rotated.secret, request!.headers, request!.body)).toMatchObject({ type: 'order.created' });
    await eventually(
      () => delivery(t, stuck.id),
      (d) => d.status === 'succeeded',
    );
  });
});

/**
 * A process whose SECRET_ENCRYPTION_KEY is not the one the database was written with stops at
 * start, with one line naming the variable, instead of failing every delivery and sealing new
 * secrets the right key cannot open. Hookline runs as a child process, as an operator starts it.
 */
describe('a process started with another SECRET_ENCRYPTION_KEY', () => {
  let db: TestDatabase;
  const otherKey = { SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64') };

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await ChildApp.killAll();
    await db?.drop();
  });

  function start(name: string, env: Record<string, string> = {}): Promise<ChildApp> {
    return ChildApp.start({ name, databaseUrl: db.url, env, startDeadlineMs: 90_000 });
  }

  async function stop(app: ChildApp): Promise<void> {
    await app.kill('SIGTERM');
    expect(await app.waitForExit(30_000)).toEqual({ code: 0, signal: null });
  }

  /** Starts with the other key, expecting exit code 1; answers the output. */
  async function refusedOutput(name: string): Promise<string> {
    const failure = await start(name, otherKey).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toMatch(/exited \(code 1/);
    return readFileSync(/see (\S+)$/.exec(failure!.message)![1], 'utf8');
  }

  function expectOneLineRefusal(output: string): void {
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/SECRET_ENCRYPTION_KEY is not the key this database was written with/);
    expect(output).not.toMatch(/^\s+at /m);
  }

  it('refuses to start in one line naming SECRET_ENCRYPTION_KEY, also on a database written before the check existed', async () => {
    const first = await start('key-first');
    const created = await first.api('/webhooks', {
      method: 'POST',
      json: { name: 'kept', url: 'http://127.0.0.1:9/hook', events: ['order.created'] },
    });
    expect(created.status).toBe(201);
    await stop(first);
    expect(await db.query('SELECT key FROM settings WHERE key = $1', [KEY_CHECK_SETTING])).toHaveLength(1);

    expectOneLineRefusal(await refusedOutput('key-other'));

    // A database from before the check value: the endpoint's secret tells the keys apart.
    await db.query('DELETE FROM settings WHERE key = $1', [KEY_CHECK_SETTING]);
    expectOneLineRefusal(await refusedOutput('key-other-no-check'));
    expect(await db.query('SELECT key FROM settings WHERE key = $1', [KEY_CHECK_SETTING])).toEqual([]);

    const again = await start('key-same');
    expect((await again.api('/webhooks')).status).toBe(200);
    await stop(again);
    expect(await db.query('SELECT key FROM settings WHERE key = $1', [KEY_CHECK_SETTING])).toHaveLength(1);
  }, 300_000);
});
