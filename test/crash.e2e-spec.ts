import { INTERRUPTED_ATTEMPT_ERROR } from '../src/dispatch/store/delivery.repository';
import { ChildApp } from './support/child-app';
import { createTestDatabase, TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { deliveryReport, publishLoad } from './support/load';
import { Receiver } from './support/receiver';

/**
 * A worker killed with SIGKILL mid-stream loses nothing. Its claims come back when their lease
 * ends (DELIVERY_TIMEOUT_MS + LEASE_MARGIN_MS, shortened here to 2 s + 1 s, on a cluster 2 s + 5 s)
 * and another process delivers them; what it had sent but not yet recorded is sent again (at
 * least once: duplicates are counted and printed, losses fail the test).
 */
// Each scenario publishes 2,000 events (4,000 deliveries): enough for a kill mid-stream with
// dozens of claims in flight, small enough for CI (about 25 s each on two cores).
const EVENTS = 2_000;
const PATHS = ['/crash/a', '/crash/b'];
/** npm run test:citus: the specs run against a Citus cluster. */
const ON_CLUSTER = Boolean(process.env.CITUS_URL);
// Six attempts over about 15 s, not three: CI runs two suites at once on two cores, and with three
// processes starved for CPU a delivery's 2-second attempts can all time out, ending it `failed`.
// Losing nothing on a crash is what this spec is about, not how starved attempts fare.
// On a cluster under the whole suite's load an outcome can take longer than a second to be written:
// its lease then ends first, another process sends the delivery again, and its late success only
// adds an attempt row, so the margin there is longer.
const ENV = {
  DELIVERY_TIMEOUT_MS: '2000',
  LEASE_MARGIN_MS: ON_CLUSTER ? '5000' : '1000',
  RETRY_SCHEDULE_MS: '0,500,1000,2000,4000,8000',
};
// On a Citus cluster (npm run test:citus) the first process distributes the schema before it serves.
const SCENARIO_TIMEOUT_MS = ON_CLUSTER ? 300_000 : 120_000;

async function statusCounts(db: TestDatabase): Promise<Record<string, number>> {
  const rows = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM deliveries GROUP BY status`);
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

async function createEndpoints(app: ChildApp, receiver: Receiver): Promise<void> {
  for (const path of PATHS) {
    const res = await app.api('/webhooks', {
      method: 'POST',
      json: { name: path, url: `${receiver.url}${path}`, events: ['order.created'] },
    });
    if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${await res.text()}`);
  }
}

interface CrashFigures {
  scenario: string;
  events: number;
  accepted: number;
  rejected: string;
  delivered: number;
  expected: number;
  duplicates: number;
  sentAtKill: number;
  arrivedAtKill: number;
  leasedAtKill: number;
  interruptedAttempts: number;
  recoveryMs: number;
  publishedMs: number;
  totalMs: number;
}

describe('crash: SIGKILL mid-stream', () => {
  let receiver: Receiver;
  let db: TestDatabase | undefined;
  const figures: CrashFigures[] = [];

  beforeAll(async () => {
    receiver = await Receiver.start();
    // A little latency, so that each process has attempts in flight when it is killed.
    receiver.respondWith((_request, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'), 5);
    });
  });

  afterEach(async () => {
    await ChildApp.killAll();
    await db?.drop();
    db = undefined;
    receiver.requests.length = 0;
  });

  afterAll(async () => {
    await receiver?.close();
    if (figures.length > 0) console.log(`crash figures:\n${JSON.stringify(figures, null, 2)}`);
  });

  /**
   * Publishes `events` over HTTP to the live processes while they dispatch, kills `victim` once a
   * third of the deliveries arrived, optionally starts a replacement, and checks that every
   * accepted event reached both endpoints and that the database ends all `succeeded`.
   */
  async function run(scenario: string, events: number, apps: ChildApp[], victim: ChildApp, replace: boolean): Promise<void> {
    const started = Date.now();
    await createEndpoints(apps[0], receiver);
    const live = [...apps];
    const load = publishLoad(() => live, { count: events, concurrency: 24, deliveries: PATHS.length });

    await receiver.waitFor(Math.round((events * PATHS.length) / 3), (r) => PATHS.includes(r.path), 60_000);
    await victim.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await victim.waitForExit(10_000)).signal).toBe('SIGKILL');
    live.splice(live.indexOf(victim), 1);
    // Claims the dead process held (its own and any other's; the others' are finishing normally).
    const orphans = (await db!.query<{ id: string }>(`SELECT id FROM deliveries WHERE status = 'pending' AND lease_token IS NOT NULL`)).map(
      (row) => row.id,
    );
    // Mid-stream: some deliveries arrived, not all.
    const arrivedAtKill = receiver.requests.length;
    expect(arrivedAtKill).toBeLessThan(events * PATHS.length);
    const sentAtKill = load.sent;
    // Recovered when every claim held at the kill ended `succeeded` (the lease is 3 s).
    const recovered = eventually(
      async () =>
        (
          await db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE id = ANY($1::text[]) AND status <> 'succeeded'`, [
            orphans,
          ])
        )[0].n,
      (left) => left === 0,
      { deadlineMs: 30_000, intervalMs: 100, what: 'claims of the killed process delivered' },
    ).then(() => Date.now() - killedAt);
    recovered.catch(() => undefined); // awaited below; meanwhile a rejection is not "unhandled"
    if (replace) live.push(await ChildApp.start({ databaseUrl: db!.url, name: `${scenario}-replacement`, env: ENV }));

    await load.done;
    const publishedMs = Date.now() - started;
    const accepted = [...load.accepted.keys()];
    expect(accepted.length).toBeGreaterThan(events * 0.9);
    await eventually(
      async () => deliveryReport(receiver, accepted, PATHS).missing.length,
      (missing) => missing === 0,
      { deadlineMs: 30_000, intervalMs: 200, what: 'every accepted event at every endpoint' },
    );
    // Every delivery row, including those of events whose 202 was lost with the process.
    await eventually(
      () => statusCounts(db!),
      (counts) => Object.keys(counts).length === 1 && counts.succeeded > 0,
      {
        // A lease of the killed process ends 3 s (on a cluster 7 s) after the kill; the attempt
        // after it may time out and wait its retry on a loaded machine, more so on a cluster.
        deadlineMs: ON_CLUSTER ? 45_000 : 15_000,
        intervalMs: 200,
        what: 'every delivery succeeded',
      },
    ).catch(async (error: unknown) => {
      // What went wrong, for the record: a few deliveries that did not succeed, with their attempts.
      // Two plain reads: a cluster runs no subquery correlated with the deliveries view.
      const unfinished = await db!.query<{ id: string; event_id: string }>(
        `SELECT id, store_id, event_id, status, attempt_count, cycle_attempts, next_attempt_at, lease_token, last_error
         FROM deliveries WHERE status <> 'succeeded' LIMIT 5`,
      );
      const attempts = await db!.query(
        `SELECT delivery_id, number, started_at, status_code, error FROM delivery_attempts
         WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, number`,
        [unfinished.map((delivery) => delivery.id)],
      );
      console.log(`${scenario}: deliveries not succeeded: ${JSON.stringify(unfinished)}; their attempts: ${JSON.stringify(attempts)}`);
      // What the receiver saw of them, to tell a request that never arrived from an answer that never came back.
      for (const delivery of unfinished) {
        const seen = receiver.requests
          .filter((r) => r.headers['x-webhook-id'] === delivery.event_id)
          .map((r) => `${r.path} at ${new Date(r.at).toISOString()}`);
        console.log(
          `${scenario}: ${delivery.id} (event accepted: ${load.accepted.has(delivery.event_id)}) reached the receiver: ${seen.join(', ') || 'never'}; killed at ${new Date(killedAt).toISOString()}`,
        );
      }
      throw error;
    });
    const counts = await statusCounts(db!);
    const [{ n: acceptedRows }] = await db!.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM deliveries WHERE event_id = ANY($1::text[]) AND status = 'succeeded'`,
      [accepted],
    );
    expect(acceptedRows).toBe(accepted.length * PATHS.length);

    const recoveryMs = await recovered;
    const report = deliveryReport(receiver, accepted, PATHS);
    // The killed process's attempts are in the log, as interrupted, under their own numbers.
    const [{ n: interruptedAttempts }] = await db!.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM delivery_attempts WHERE error = $1 AND delivery_id = ANY($2::text[])`,
      [INTERRUPTED_ATTEMPT_ERROR, orphans],
    );
    const gaps = await db!.query<{ id: string }>(
      `SELECT d.id, d.attempt_count, d.cycle_attempts, d.last_error,
         (SELECT json_agg(json_build_array(a.number, a.trigger, a.started_at, a.status_code, a.error) ORDER BY a.number)
          FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.store_id = d.store_id) AS attempts
       FROM deliveries d
       WHERE d.attempt_count <> (SELECT count(*) FROM delivery_attempts a WHERE a.delivery_id = d.id AND a.store_id = d.store_id)`,
    );
    if (gaps.length > 0) console.log(`${scenario}: attempt counts without their rows: ${JSON.stringify(gaps.slice(0, 5))}`);
    expect(gaps.length).toBe(0);
    if (apps.length === 1) expect(interruptedAttempts).toBe(orphans.length);
    figures.push({
      scenario,
      events,
      accepted: accepted.length,
      rejected: JSON.stringify(Object.fromEntries(load.rejected)),
      delivered: report.delivered,
      expected: report.expected,
      duplicates: report.duplicates,
      sentAtKill,
      arrivedAtKill,
      leasedAtKill: orphans.length,
      interruptedAttempts,
      recoveryMs,
      publishedMs,
      totalMs: Date.now() - started,
    });
    console.log(`${scenario}: ${JSON.stringify(figures.at(-1))} db=${JSON.stringify(counts)}`);
    expect(report.missing).toEqual([]);
    for (const app of live) expect(app.exit).toBeUndefined();
  }

  it(
    'delivers every accepted event after the only process is killed and a new one starts',
    async () => {
      db = await createTestDatabase();
      const first = await ChildApp.start({ databaseUrl: db.url, name: 'crash-single', env: ENV });
      await run('1 process, SIGKILL, restart', EVENTS, [first], first, true);
    },
    SCENARIO_TIMEOUT_MS,
  );

  // Not on a cluster: there the three processes' claims cancel each other in distributed
  // deadlocks, and under the whole suite on two cores the drain before the kill falls to a few
  // dozen deliveries a second (docs/scaling.md, "Citus").
  (ON_CLUSTER ? it.skip : it)(
    'delivers every accepted event when one of three processes sharing the database is killed',
    async () => {
      db = await createTestDatabase();
      // Together: migrations run under an advisory lock, so concurrent starts are safe.
      const t0 = Date.now();
      const apps = await Promise.all(
        ['crash-trio-a', 'crash-trio-b', 'crash-trio-c'].map((name) => ChildApp.start({ databaseUrl: db!.url, name, env: ENV })),
      );
      console.log(`trio started in ${Date.now() - t0} ms`);
      await run('3 processes, 1 SIGKILLed', EVENTS, apps, apps[1], false);
    },
    SCENARIO_TIMEOUT_MS,
  );
});
