import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { startApp, TestApp } from './support/app';
import { freePort } from './support/child-app';
import { eventually } from './support/eventually';
import { createWebhook, delivery, deliveriesOf, DeliveryView, orderData, publish } from './support/fixtures';

const ROOT = resolve(__dirname, '..');

/** `npm run example:receiver` as the README runs it: a process of its own, configured by its environment. */
class ExampleReceiver {
  stdout = '';
  stderr = '';
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/receiver/example-receiver.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolveExit) => this.child.once('exit', (code) => resolveExit(code)));
  }

  async listening(): Promise<string> {
    const out = await eventually(
      async () => (this.child.exitCode === null ? this.stdout : `exited: ${this.stderr}`),
      (text) => text.includes('example receiver on ') || text.startsWith('exited'),
      { deadlineMs: 30_000, what: 'the example receiver listening' },
    );
    if (out.startsWith('exited')) throw new Error(out);
    return out;
  }

  exit(): Promise<number | null> {
    return this.exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}

describe('the example receiver (npm run example:receiver)', () => {
  let t: TestApp;
  const receivers: ExampleReceiver[] = [];
  const webhookIds: string[] = [];

  /** Registers the URL the receiver names, then starts it with the secret from that answer. */
  async function registeredReceiver(env: Record<string, string>): Promise<{ receiver: ExampleReceiver; webhookId: string }> {
    const port = await freePort();
    const webhook = await createWebhook(t, `http://localhost:${port}/hooks`);
    const receiver = new ExampleReceiver({ PORT: String(port), WEBHOOK_SECRET: webhook.secret, ...env });
    receivers.push(receiver);
    webhookIds.push(webhook.id);
    const started = await receiver.listening();
    expect(started).toContain(`example receiver on http://localhost:${port}/hooks`);
    expect(started).toMatch(/WEBHOOK_SECRET .*the secret in the response that registered/);
    return { receiver, webhookId: webhook.id };
  }

  async function finished(webhookId: string): Promise<DeliveryView> {
    const [row] = await eventually(
      () => deliveriesOf(t, webhookId),
      (rows) => rows.length === 1 && rows[0].status !== 'pending',
      { deadlineMs: 20_000, what: 'the delivery finished' },
    );
    return delivery(t, row.id);
  }

  beforeAll(async () => {
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,100,100' } });
  });

  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()));
    // So that the next test's events go to its own receiver only.
    for (const id of webhookIds.splice(0)) expect((await t.api(`/webhooks/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('without WEBHOOK_SECRET says which URL to register and that the secret is in the answer', async () => {
    const receiver = new ExampleReceiver({ PORT: '4123' });
    receivers.push(receiver);
    expect(await receiver.exit()).toBe(1);
    expect(receiver.stderr).toContain('register http://localhost:4123/hooks with POST /api/v1/external/webhooks');
    expect(receiver.stderr).toMatch(/take "secret" from\s+the response/);
  });

  it('accepts and prints a verified delivery by default', async () => {
    const { receiver, webhookId } = await registeredReceiver({});
    const event = await publish(t, 'order.created', orderData(1));
    const detail = await finished(webhookId);
    expect(detail).toMatchObject({ status: 'succeeded', attemptCount: 1, lastStatusCode: 200 });
    expect(receiver.stdout).toContain(`order.created ${event.id} ${JSON.stringify(orderData(1))}`);
  });

  it('FAIL_FIRST=2 fails the first two attempts of an event, so the third, a retry, succeeds', async () => {
    const { receiver, webhookId } = await registeredReceiver({ FAIL_FIRST: '2' });
    expect(receiver.stdout).toContain('FAIL_FIRST=2: the first 2 attempts of each event answer 500');
    const event = await publish(t, 'order.created', orderData(2));
    const detail = await finished(webhookId);
    expect(detail).toMatchObject({ status: 'succeeded', attemptCount: 3, lastStatusCode: 200 });
    expect(detail.attempts!.map((attempt) => attempt.statusCode)).toEqual([500, 500, 200]);
    expect(receiver.stdout).toContain(`order.created ${event.id} attempt 1: answered 500 on purpose`);
    expect(receiver.stdout).toContain(`order.created ${event.id} attempt 2: answered 500 on purpose`);
    expect(receiver.stdout).toContain(`order.created ${event.id} ${JSON.stringify(orderData(2))}`);
  });

  it('FAIL_FIRST=3 makes the delivery end failed, and a manual retry then succeeds (the README walk-through)', async () => {
    const { webhookId } = await registeredReceiver({ FAIL_FIRST: '3' });
    await publish(t, 'order.created', orderData(4));
    const failed = await finished(webhookId);
    expect(failed).toMatchObject({ status: 'failed', attemptCount: 3, lastStatusCode: 500 });
    expect((await t.api(`/deliveries/${failed.id}/retry`, { method: 'POST' })).status).toBe(202);
    const retried = await eventually(
      () => delivery(t, failed.id),
      (view) => view.status === 'succeeded',
      { what: 'the retried delivery succeeded' },
    );
    expect(retried.attempts!.map((attempt) => attempt.statusCode)).toEqual([500, 500, 500, 200]);
  });

  it('STATUS=503 answers every attempt with it, so the delivery ends failed', async () => {
    const { receiver, webhookId } = await registeredReceiver({ STATUS: '503' });
    expect(receiver.stdout).toContain('STATUS=503: every delivery is answered 503');
    await publish(t, 'order.created', orderData(3));
    const detail = await finished(webhookId);
    expect(detail).toMatchObject({ status: 'failed', attemptCount: 3, lastStatusCode: 503 });
    expect(detail.attempts!.map((attempt) => attempt.statusCode)).toEqual([503, 503, 503]);
  });

  it('refuses a STATUS that is not an HTTP status', async () => {
    const receiver = new ExampleReceiver({ STATUS: 'teapot', WEBHOOK_SECRET: 'whsec_x' });
    receivers.push(receiver);
    expect(await receiver.exit()).toBe(1);
    expect(receiver.stderr).toContain('STATUS must be a whole number from 200 to 599');
  });
});
