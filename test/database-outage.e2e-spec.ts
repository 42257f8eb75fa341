import { ChildApp } from './support/child-app';
import { adminQuery, createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { deliveryReport, publishLoad } from './support/load';
import { Receiver } from './support/receiver';

/**
 * PostgreSQL goes away under load. The database refuses new connections
 * (ALLOW_CONNECTIONS false) and every existing one is cut (pg_terminate_backend, repeated) for
 * OUTAGE_MS; then it comes back.
 */
const OUTAGE_MS = 6_000;
const PATHS = ['/outage/a', '/outage/b'];

interface LogLine {
  level?: number;
  msg?: string;
  context?: string;
  time?: number;
  req?: unknown;
}

describe('database outage under load', () => {
  let receiver: Receiver;
  let db: TestDatabase | undefined;

  beforeAll(async () => {
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await ChildApp.killAll();
    if (db) {
      await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
      await db.drop();
    }
    await receiver?.close();
  });

  it('answers 503 while the database is away, stays up without flooding the log, and then delivers every accepted event', async () => {
    db = await createTestDatabase();
    const app = await ChildApp.start({ databaseUrl: db.url, name: 'outage', env: { DELIVERY_TIMEOUT_MS: '5000', LOG_LEVEL: 'warn' } });
    for (const path of PATHS) {
      const res = await app.api('/webhooks', {
        method: 'POST',
        json: { name: path, url: `${receiver.url}${path}`, events: ['order.created'] },
      });
      expect(res.status).toBe(201);
    }

    const load = publishLoad(() => [app], { count: 1_000_000, concurrency: 8, deliveries: PATHS.length });
    await receiver.waitFor(300, (r) => PATHS.includes(r.path), 30_000);

    const cutAt = Date.now();
    let restoredAt = Number.POSITIVE_INFINITY;
    const outage = { health503: 0, health503AfterMs: -1 };
    let cutting = true;
    let cutter: Promise<void> = Promise.resolve();
    try {
      await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
      // Cut whatever is connected, again and again (a connection may be opening as we cut).
      cutter = (async () => {
        while (cutting && Date.now() - cutAt < OUTAGE_MS) {
          await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [
            db.name,
          ]);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      })();

      await eventually(
        () => app.health(),
        (status) => status === 503,
        { deadlineMs: 5_000, intervalMs: 100, what: '/health 503' },
      );
      outage.health503AfterMs = Date.now() - cutAt;
      // A publish of its own, besides the load: a clear 503 in the error shape.
      const res = await eventually(
        () =>
          app.api('/events', {
            method: 'POST',
            json: { type: 'order.created', data: { id: 'o', orderNumber: 'ORD-1', status: 'PENDING', total: 1, currency: 'EUR' } },
          }),
        (response) => response.status !== 202,
        { deadlineMs: 5_000, intervalMs: 100, what: 'a publish refused' },
      );
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', message: expect.any(String) });
      await cutter;
      outage.health503 = (await app.health()) === 503 ? 1 : 0;
    } finally {
      cutting = false;
      await cutter;
      await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
      restoredAt = Date.now();
    }
    expect(outage.health503).toBe(1);

    const healthBackMs = (
      await eventually(
        async () => [await app.health(), Date.now() - restoredAt] as const,
        ([status]) => status === 200,
        {
          deadlineMs: 15_000,
          intervalMs: 100,
          what: '/health 200 again',
        },
      )
    )[1];
    // Publishing works again: some events accepted after the restore.
    const acceptedAtRestore = load.accepted.size;
    await eventually(
      async () => load.accepted.size,
      (size) => size >= acceptedAtRestore + 100,
      { deadlineMs: 15_000, intervalMs: 100, what: 'publishes accepted again' },
    );
    load.stop();
    await load.done;

    const accepted = [...load.accepted.keys()];
    const deliveredAfterMs = (
      await eventually(
        async () => [deliveryReport(receiver, accepted, PATHS).missing.length, Date.now() - restoredAt] as const,
        ([missing]) => missing === 0,
        { deadlineMs: 30_000, intervalMs: 200, what: 'every accepted event delivered' },
      )
    )[1];
    await eventually(
      async () => (await db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE status <> 'succeeded'`))[0].n,
      (left) => left === 0,
      { deadlineMs: 15_000, intervalMs: 200, what: 'every delivery succeeded' },
    );

    // Every refusal was a 503 in the API's error shape: never a 500, never a dropped connection.
    const statuses = Object.fromEntries(load.rejected);
    expect(Object.keys(statuses).filter((status) => status !== '503')).toEqual([]);
    for (const { body } of load.rejectedBodies) {
      expect(JSON.parse(body)).toEqual({ statusCode: 503, error: 'Service Unavailable', message: expect.any(String) });
    }

    // Still the same process, and its background work (not the requests) logged a handful of lines.
    expect(app.exit).toBeUndefined();
    const lines = app.logLines() as LogLine[];
    const background = lines.filter((line) => (line.level ?? 0) >= 40 && !line.req && line.context !== 'Errors');
    const byContext: Record<string, number> = {};
    for (const line of background) byContext[line.context ?? 'none'] = (byContext[line.context ?? 'none'] ?? 0) + 1;
    const report = deliveryReport(receiver, accepted, PATHS);
    const figures = {
      outageMs: restoredAt - cutAt,
      accepted: accepted.length,
      refused503: statuses['503'] ?? 0,
      delivered: report.delivered,
      expected: report.expected,
      duplicates: report.duplicates,
      health503AfterMs: outage.health503AfterMs,
      healthBackMs,
      dispatchResumedAfterMs: Math.min(...receiver.requests.filter((r) => r.at >= restoredAt).map((r) => r.at)) - restoredAt,
      deliveredAfterMs,
      backgroundWarnLines: background.length,
      byContext,
      allLines: lines.length,
    };
    console.log(`database outage: ${JSON.stringify(figures)}`);
    expect(report.missing).toEqual([]);
    // Backed off (the claim interval grew to seconds), a few lines in all, none at error level.
    expect(background.some((line) => /^claim failed .* retrying in (1600|3200|5000) ms$/.test(line.msg ?? ''))).toBe(true);
    expect(background.length).toBeLessThan(40);
    expect(background.filter((line) => (line.level ?? 0) >= 50)).toEqual([]);
  }, 120_000);
});
