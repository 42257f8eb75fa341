import type { ServerResponse } from 'node:http';
import { ChildApp } from './support/child-app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { deliveryReport } from './support/load';
import { Receiver } from './support/receiver';

/**
 * On SIGTERM a worker stops claiming, lets its in-flight attempts finish (or,
 * past SHUTDOWN_TIMEOUT_MS, gives their claims back), exits 0, and loses nothing: a new process
 * delivers the rest, and what was answered during the shutdown is recorded, not sent again.
 */
interface DeliveryState {
  status: string;
  leased: boolean;
  attempt_count: number;
  attempts: number;
  succeeded_attempts: number;
}

async function deliveryStates(db: TestDatabase): Promise<DeliveryState[]> {
  return db.query<DeliveryState>(
    `SELECT d.status, d.lease_token IS NOT NULL AS leased, d.attempt_count,
       (SELECT count(*)::int FROM delivery_attempts a WHERE a.delivery_id = d.id) AS attempts,
       (SELECT count(*)::int FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.status_code = 200) AS succeeded_attempts
     FROM deliveries d`,
  );
}

async function publishAll(app: ChildApp, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await app.api('/events', {
      method: 'POST',
      json: {
        type: 'order.created',
        data: { id: `ord_${i}`, orderNumber: `ORD-${i}`, status: 'PENDING', total: 100 + i, currency: 'EUR' },
      },
    });
    expect(res.status).toBe(202);
    ids.push(((await res.json()) as { id: string }).id);
  }
  return ids;
}

describe('graceful shutdown on SIGTERM', () => {
  let receiver: Receiver;
  let db: TestDatabase | undefined;
  /** Answers the receiver is holding back. */
  let held: ServerResponse[] = [];
  const figures: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    receiver = await Receiver.start();
  });

  afterEach(async () => {
    for (const res of held) res.destroy();
    held = [];
    await ChildApp.killAll();
    await db?.drop();
    db = undefined;
    receiver.requests.length = 0;
  });

  afterAll(async () => {
    await receiver?.close();
    console.log(`graceful shutdown figures:\n${JSON.stringify(figures, null, 2)}`);
  });

  it('lets in-flight attempts finish, records them, claims nothing more and exits 0; a new process delivers the rest exactly once', async () => {
    const EVENTS = 40;
    const SLOTS = 10;
    const path = '/graceful/finish';
    db = await createTestDatabase();
    const env = { SHUTDOWN_TIMEOUT_MS: '8000', DELIVERY_TIMEOUT_MS: '5000', ENDPOINT_CONCURRENCY: String(SLOTS), LOG_LEVEL: 'info' };
    // Until SIGTERM the answers are held; those are then answered ANSWER_AFTER_MS later, and
    // the requests of the next process at once.
    const ANSWER_AFTER_MS = 1_000;
    let sigtermSent = false;
    receiver.respondWith((_request, res) => {
      if (!sigtermSent) held.push(res);
      else res.writeHead(200).end('ok');
    });
    const first = await ChildApp.start({ databaseUrl: db.url, name: 'graceful-finish', env });
    const hook = await first.api('/webhooks', {
      method: 'POST',
      json: { name: 'slow', url: `${receiver.url}${path}`, events: ['order.created'] },
    });
    expect(hook.status).toBe(201);
    const ids = await publishAll(first, EVENTS);

    // Every slot of the endpoint is taken by a held request.
    await receiver.waitFor(SLOTS, (r) => r.path === path, 10_000);
    await first.kill('SIGTERM');
    const termAt = Date.now();
    sigtermSent = true;
    for (const res of held.splice(0)) setTimeout(() => res.writeHead(200).end('ok'), ANSWER_AFTER_MS);
    // While it drains, readiness says so: a load balancer stops sending it requests.
    const draining = await eventually(
      () => fetch(`${first.baseUrl}/health`).then((res) => res.status),
      (status) => status === 503,
      { deadlineMs: ANSWER_AFTER_MS / 2, intervalMs: 20, what: '/health 503 while draining' },
    );
    expect(draining).toBe(503);

    const exit = await first.waitForExit(15_000);
    const exitMs = Date.now() - termAt;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitMs).toBeGreaterThanOrEqual(ANSWER_AFTER_MS - 100);
    // No claim after SIGTERM: only the ten that were in flight reached the receiver.
    expect(receiver.to(path)).toHaveLength(SLOTS);

    // The ten are recorded as succeeded with one attempt each; the rest untouched and claimable.
    const states = await deliveryStates(db);
    const succeeded = states.filter((s) => s.status === 'succeeded');
    expect(succeeded).toHaveLength(SLOTS);
    expect(succeeded.every((s) => s.attempts === 1 && s.succeeded_attempts === 1 && !s.leased)).toBe(true);
    const pending = states.filter((s) => s.status === 'pending');
    expect(pending).toHaveLength(EVENTS - SLOTS);
    expect(pending.every((s) => s.attempt_count === 0 && s.attempts === 0 && !s.leased)).toBe(true);
    expect(first.logLines().some((line) => line.msg === 'stopped')).toBe(true);

    const second = await ChildApp.start({ databaseUrl: db.url, name: 'graceful-finish-next', env });
    await eventually(
      () => deliveryStates(db!),
      (all) => all.every((s) => s.status === 'succeeded'),
      { deadlineMs: 20_000, intervalMs: 100, what: 'all delivered' },
    );
    const report = deliveryReport(receiver, ids, [path]);
    expect(report.missing).toEqual([]);
    expect(report.duplicates).toBe(0);
    const [{ n: attempts }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM delivery_attempts`);
    expect(attempts).toBe(EVENTS);
    figures.push({
      scenario: 'in-flight attempts finish',
      events: EVENTS,
      inFlightAtSigterm: SLOTS,
      exitCode: exit.code,
      exitMs,
      delivered: report.delivered,
      duplicates: report.duplicates,
      attempts,
    });
    await second.kill('SIGTERM');
    expect(await second.waitForExit(15_000)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('gives back the claims of attempts still unanswered at SHUTDOWN_TIMEOUT_MS and exits 0; a new process delivers them', async () => {
    const EVENTS = 20;
    const SLOTS = 5;
    const SHUTDOWN_TIMEOUT_MS = 1_000;
    const path = '/graceful/hang';
    db = await createTestDatabase();
    const env = {
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      DELIVERY_TIMEOUT_MS: '10000',
      ENDPOINT_CONCURRENCY: String(SLOTS),
      LOG_LEVEL: 'info',
    };
    let hang = true;
    receiver.respondWith((_request, res) => {
      if (hang) held.push(res);
      else res.writeHead(200).end('ok');
    });
    const first = await ChildApp.start({ databaseUrl: db.url, name: 'graceful-hang', env });
    const hook = await first.api('/webhooks', {
      method: 'POST',
      json: { name: 'hanging', url: `${receiver.url}${path}`, events: ['order.created'] },
    });
    expect(hook.status).toBe(201);
    const ids = await publishAll(first, EVENTS);
    await receiver.waitFor(SLOTS, (r) => r.path === path, 10_000);

    await first.kill('SIGTERM');
    const termAt = Date.now();
    const exit = await first.waitForExit(SHUTDOWN_TIMEOUT_MS + 10_000);
    const exitMs = Date.now() - termAt;
    expect(exit).toEqual({ code: 0, signal: null });
    // Within the shutdown timeout plus the time to write and close (not the 10 s attempt limit).
    expect(exitMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 3_000);
    expect(first.logLines().some((line) => line.msg === `shutdown: giving back ${SLOTS} unfinished claims`)).toBe(true);
    expect(receiver.to(path)).toHaveLength(SLOTS);

    // Nothing is left leased: the five are due again at once, unattempted in the log.
    const states = await deliveryStates(db);
    expect(states).toHaveLength(EVENTS);
    expect(states.every((s) => s.status === 'pending' && !s.leased && s.attempt_count === 0 && s.attempts === 0)).toBe(true);

    hang = false;
    const restartAt = Date.now();
    const second = await ChildApp.start({ databaseUrl: db.url, name: 'graceful-hang-next', env });
    await eventually(
      () => deliveryStates(db!),
      (all) => all.every((s) => s.status === 'succeeded'),
      { deadlineMs: 20_000, intervalMs: 100, what: 'all delivered' },
    );
    const report = deliveryReport(receiver, ids, [path]);
    expect(report.missing).toEqual([]);
    // The five given back reached the receiver twice (sent, never answered, sent again).
    expect(report.duplicates).toBe(SLOTS);
    figures.push({
      scenario: 'attempts unanswered past SHUTDOWN_TIMEOUT_MS',
      events: EVENTS,
      inFlightAtSigterm: SLOTS,
      exitCode: exit.code,
      exitMs,
      delivered: report.delivered,
      duplicates: report.duplicates,
      redeliveredAfterRestartMs: Date.now() - restartAt,
    });
    await second.kill('SIGTERM');
    expect(await second.waitForExit(15_000)).toEqual({ code: 0, signal: null });
  }, 60_000);
});
