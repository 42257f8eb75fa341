import { createHmac } from 'node:crypto';
import { verifyWebhook } from '../src/receiver/verify-webhook';
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createWebhook, delivery, deliveriesOf, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * Sending with the default retry schedule 0,1000,4000 against a real receiver on
 * 127.0.0.1: what arrives, byte for byte, and when.
 */
describe('delivery to a real receiver', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ env: { DOCS_URL: 'https://hooks.example.com/docs', SERVICE_NAME: 'Hookline' } });
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('POSTs the exact envelope with the five headers and a signature that verifies', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/signed`);
    const before = Date.now();
    const event = await publish(t, 'order.created', orderData(1));
    expect(event.deliveries).toBe(1);

    const [request] = await receiver.waitFor(1, (r) => r.path === '/signed');
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('Hookline-Webhook/1.0 (+https://hooks.example.com/docs)');
    expect(request.headers['x-webhook-id']).toBe(event.id);
    const timestamp = request.headers['x-webhook-timestamp'] as string;
    expect(timestamp).toMatch(/^\d{13}$/);
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(Date.now());

    const body = request.body.toString('utf8');
    expect(body).toBe(JSON.stringify({ id: event.id, type: 'order.created', timestamp: event.timestamp, data: orderData(1) }));
    expect(event.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const expected = `sha256=${createHmac('sha256', webhook.secret).update(`${timestamp}.${body}`).digest('hex')}`;
    expect(request.headers['x-webhook-signature']).toBe(expected);
    expect(verifyWebhook(webhook.secret, request.headers, request.body).id).toBe(event.id);

    const [row] = await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(row).toMatchObject({ eventId: event.id, status: 'succeeded', attemptCount: 1, lastStatusCode: 200, nextAttemptAt: null });
  });

  it('retries about 1 s and then 4 s after failures (± the 10 % jitter), with the same body and id, fresh timestamps, then marks it failed', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/failing`);
    receiver.respondWith((request, res) => {
      res.writeHead(request.path === '/failing' ? 500 : 200).end(request.path === '/failing' ? 'database down' : '');
    });
    const event = await publish(t, 'order.created', orderData(2));

    const attempts = await receiver.waitFor(3, (r) => r.path === '/failing', 12_000);
    const gap1 = attempts[1].at - attempts[0].at;
    const gap2 = attempts[2].at - attempts[1].at;
    expect(gap1).toBeGreaterThanOrEqual(900 - 50);
    expect(gap1).toBeLessThan(1_100 + 500);
    expect(gap2).toBeGreaterThanOrEqual(3_600 - 50);
    expect(gap2).toBeLessThan(4_400 + 600);

    const bodies = new Set(attempts.map((a) => a.body.toString('utf8')));
    expect(bodies.size).toBe(1);
    expect(new Set(attempts.map((a) => a.headers['x-webhook-id']))).toEqual(new Set([event.id]));
    expect(new Set(attempts.map((a) => a.headers['x-webhook-timestamp'])).size).toBe(3);
    for (const attempt of attempts) expect(verifyWebhook(webhook.secret, attempt.headers, attempt.body).id).toBe(event.id);

    const [row] = await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'failed',
    );
    const detail = await delivery(t, row.id);
    expect(detail).toMatchObject({ status: 'failed', attemptCount: 3, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null });
    expect(detail.attempts).toHaveLength(3);
    expect(detail.attempts!.map((a) => [a.number, a.statusCode, a.error, a.responseBody])).toEqual([
      [1, 500, 'HTTP 500', 'database down'],
      [2, 500, 'HTTP 500', 'database down'],
      [3, 500, 'HTTP 500', 'database down'],
    ]);
    expect(detail.event).toEqual(JSON.parse(attempts[0].body.toString('utf8')));
    expect(receiver.to('/failing')).toHaveLength(3);
  });

  it('retries a failed delivery by hand with the same event id and body', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/manual`);
    receiver.respondWith((request, res) => res.writeHead(request.path === '/manual' ? 503 : 200).end());
    const event = await publish(t, 'order.created', orderData(3));
    const [failed] = await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'failed',
      { deadlineMs: 12_000 },
    );
    const firstBody = receiver.to('/manual')[0].body.toString('utf8');

    receiver.respondWith((_request, res) => res.writeHead(200).end('{"received":true}'));
    const retry = await t.api(`/deliveries/${failed.id}/retry`, { method: 'POST' });
    expect(retry.status).toBe(202);
    expect(await retry.json()).toMatchObject({ id: failed.id, status: 'pending' });

    const done = await eventually(
      () => delivery(t, failed.id),
      (d) => d.status === 'succeeded',
    );
    expect(done.attemptCount).toBe(4);
    expect(done.attempts!.map((a) => a.statusCode)).toEqual([503, 503, 503, 200]);
    const fourth = receiver.to('/manual')[3];
    expect(fourth.headers['x-webhook-id']).toBe(event.id);
    expect(fourth.body.toString('utf8')).toBe(firstBody);
  });

  it('answers 409 to a retry of a pending delivery', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/slow`);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.respondWith(async (request, res) => {
      if (request.path === '/slow') await held;
      res.writeHead(200).end();
    });
    await publish(t, 'order.created', orderData(4));
    await receiver.waitFor(1, (r) => r.path === '/slow');
    const [pending] = await deliveriesOf(t, webhook.id);
    expect(pending.status).toBe('pending');
    const res = await t.api(`/deliveries/${pending.id}/retry`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ statusCode: 409, error: 'Conflict', message: expect.stringMatching(/pending/) });
    release();
    await eventually(
      () => delivery(t, pending.id),
      (d) => d.status === 'succeeded',
    );
  });

  it('treats a redirect as a failed attempt and does not follow it', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/moved`, ['order.created'], {});
    await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { events: ['payment.received'] } });
    receiver.respondWith((request, res) => {
      if (request.path === '/moved') res.writeHead(302, { location: `${receiver.url}/elsewhere` }).end();
      else res.writeHead(200).end();
    });
    const result = await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' });
    expect(result.status).toBe(200);
    expect(await result.json()).toMatchObject({
      success: false,
      statusCode: 302,
      error: expect.stringMatching(/redirect 302 not followed/),
    });
    expect(receiver.to('/elsewhere')).toHaveLength(0);
  });

  it('keeps at most 4 KiB of a response body', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/chatty`);
    receiver.respondWith((request, res) => res.writeHead(request.path === '/chatty' ? 400 : 200).end('x'.repeat(10_000)));
    const result = (await (await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' })).json()) as { deliveryId: string };
    const detail = await delivery(t, result.deliveryId);
    expect(detail.attempts![0].responseBody).toHaveLength(4096);
    expect(detail.attempts![0].statusCode).toBe(400);
  });

  it('tests an endpoint with one synchronous signed webhook.test delivery, recorded in the log, active or not', async () => {
    receiver.respondWith((_request, res) => res.writeHead(200).end('{"received":true}'));
    const webhook = await createWebhook(t, `${receiver.url}/tested`, ['order.created'], { isActive: false });
    const res = await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' });
    expect(res.status).toBe(200);
    const result = (await res.json()) as Record<string, unknown>;
    expect(result).toEqual({
      success: true,
      statusCode: 200,
      durationMs: expect.any(Number),
      error: null,
      eventId: expect.stringMatching(/^evt_/),
      deliveryId: expect.stringMatching(/^del_/),
    });
    const [request] = receiver.to('/tested');
    const envelope = verifyWebhook(webhook.secret, request.headers, request.body);
    expect(envelope).toMatchObject({
      id: result.eventId,
      type: 'webhook.test',
      data: { webhookId: webhook.id, name: `endpoint ${receiver.url}/tested`, message: expect.any(String) },
    });
    const log = await deliveriesOf(t, webhook.id, '?eventType=webhook.test');
    expect(log).toEqual([
      expect.objectContaining({ id: result.deliveryId, status: 'succeeded', attemptCount: 1, eventType: 'webhook.test' }),
    ]);

    receiver.respondStatus(500);
    const failing = (await (await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' })).json()) as Record<string, unknown>;
    expect(failing).toMatchObject({ success: false, statusCode: 500, error: 'HTTP 500' });
    expect((await delivery(t, failing.deliveryId as string)).status).toBe('failed');
    receiver.respondStatus(200);
  });

  it('records an answer holding a NUL byte (PostgreSQL text cannot) instead of failing the whole batch', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/nul`, ['order.completed']);
    receiver.respondWith((request, res) => res.writeHead(200).end(request.path === '/nul' ? 'ok\u0000done' : ''));
    await publish(t, 'order.completed', { ...orderData(5), status: 'COMPLETED' });
    const [row] = await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect((await delivery(t, row.id)).attempts![0].responseBody).toBe('ok\uFFFDdone');
    expect(receiver.to('/nul')).toHaveLength(1);
    const tested = (await (await t.api(`/webhooks/${webhook.id}/test`, { method: 'POST' })).json()) as Record<string, unknown>;
    expect(tested).toMatchObject({ success: true, statusCode: 200 });
    receiver.respondStatus(200);
  });

  it('signs with the new secret at once after a rotation, also for deliveries of the running dispatcher', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/rotated`, ['customer.updated']);
    const customer = { id: 'cus_9', email: 'a@example.com', firstName: 'A', lastName: 'B' };
    await publish(t, 'customer.updated', customer);
    const [before] = await receiver.waitFor(1, (r) => r.path === '/rotated');
    expect(verifyWebhook(webhook.secret, before.headers, before.body).type).toBe('customer.updated');

    const rotated = (await (await t.api(`/webhooks/${webhook.id}/rotate-secret`, { method: 'POST' })).json()) as { secret: string };
    await publish(t, 'customer.updated', customer);
    const [, after] = await receiver.waitFor(2, (r) => r.path === '/rotated');
    expect(verifyWebhook(rotated.secret, after.headers, after.body).type).toBe('customer.updated');
    expect(() => verifyWebhook(webhook.secret, after.headers, after.body)).toThrow();
  });

  it('lets an attempt in flight when its endpoint is deactivated finish, and ends the delivery at the next claim', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/paused-mid-flight`, ['stock.low']);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.respondWith(async (request, res) => {
      if (request.path === '/paused-mid-flight') {
        await held;
        res.writeHead(500).end('busy');
      } else res.writeHead(200).end();
    });
    await publish(t, 'stock.low', { productId: 'p9', sku: 'S9', name: 'Mug', quantity: 1, threshold: 5 });
    await receiver.waitFor(1, (r) => r.path === '/paused-mid-flight');
    expect((await t.api(`/webhooks/${webhook.id}`, { method: 'PUT', json: { isActive: false } })).status).toBe(200);
    release();

    // The attempt in flight is recorded as it went (HTTP 500); its retry, claimed a second later,
    // finds the endpoint inactive and ends the delivery failed without another request.
    const [row] = await eventually(
      () => deliveriesOf(t, webhook.id),
      (rows) => rows[0]?.status === 'failed',
      { deadlineMs: 5_000 },
    );
    const detail = await delivery(t, row.id);
    expect(detail.lastError).toMatch(/inactive/);
    expect(detail.attempts!.map((a) => [a.number, a.statusCode])).toEqual([[1, 500]]);
    expect(receiver.to('/paused-mid-flight')).toHaveLength(1);
    receiver.respondStatus(200);
  });

  it('records a timeout as a failed attempt after DELIVERY_TIMEOUT_MS', async () => {
    const fast = await startApp({ env: { DELIVERY_TIMEOUT_MS: '300' }, db: t.db });
    try {
      const webhook = await createWebhook(fast, `${receiver.url}/hangs`, ['payment.refunded']);
      receiver.respondWith((request, res) => {
        if (request.path !== '/hangs') res.writeHead(200).end();
      });
      const result = (await (await fast.api(`/webhooks/${webhook.id}/test`, { method: 'POST' })).json()) as Record<string, unknown>;
      expect(result).toMatchObject({ success: false, statusCode: null, error: expect.stringMatching(/^timeout/) });
      expect(result.durationMs).toBeGreaterThanOrEqual(290);
      expect(result.durationMs).toBeLessThan(2_000);
    } finally {
      receiver.respondStatus(200);
      await fast.close();
    }
  });
});
