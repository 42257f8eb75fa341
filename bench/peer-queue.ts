/**
 * A contender of the peers scenario (bench/scenarios/peers.ts): the same signed deliveries through
 * a job queue instead of Hookline, sent with bench/lib/signed-sender.ts to the same receiver.
 *
 *   mode enqueue  fills the queue with `deliveries` jobs (one per endpoint per event, fanned out
 *                 as Hookline does) and exits; run before the worker, so the drain is measured alone
 *   mode work     connects, announces `ready`, and drains on the `drain` call; `completed` counts
 *                 what the queue itself holds as done; `stop` closes it
 *
 * Kinds:
 *   ceiling   no queue: the jobs are in memory, `concurrency` sends in flight
 *   pg-boss   `loops` loops, each fetching `batchSize` jobs, sending them all and completing the
 *             ones answered 2xx in one statement (the failed ones `fail`); its `work()` waits out
 *             its polling interval (at least 0.5 s) after each batch, so the loop is driven here
 *             with fetch/complete, pg-boss's own API, to let it go as fast as it can
 *   bullmq    one Worker with `concurrency`; the processor resolves on a 2xx and throws
 *             otherwise, so a job completes only once its endpoint acknowledged it
 */
import { Queue, Worker } from 'bullmq';
import PgBoss from 'pg-boss';
import { EVENT_CATALOGUE, type EventType } from '../src/catalogue/event-catalogue';
import { buildEnvelope } from '../src/catalogue/envelope';
import { childArgs, exitWithParent, runMain, send, serveRpc } from './lib/child';
import { sleep } from './lib/children';
import { SignedSender } from './lib/signed-sender';

export type PeerKind = 'ceiling' | 'pg-boss' | 'bullmq';

export interface PeerQueueArgs {
  kind: PeerKind;
  mode: 'enqueue' | 'work';
  /** The event type whose catalogue example is the payload (Hookline's run uses the same). */
  type: EventType;
  urls: string[];
  secrets: string[];
  deliveries: number;
  queue: string;
  concurrency: number;
  /** pg-boss: jobs per fetch, and how many fetch loops run at once. */
  batchSize?: number;
  loops?: number;
  databaseUrl?: string;
  redis?: { host: string; port: number };
  connectionsPerOrigin: number;
  timeoutMs: number;
}

export interface PeerDrain {
  ok: number;
  failed: number;
  ms: number;
}

interface Job {
  e: number;
  id: string;
  b: string;
}

const PGBOSS_OPTIONS = { schema: 'pgboss', supervise: false, schedule: false, application_name: 'pgboss' } as const;

/** One envelope per event, one job per endpoint: the rows Hookline's fan-out writes. */
function makeJobs(type: EventType, deliveries: number, endpoints: number): Job[] {
  const example = EVENT_CATALOGUE[type].example;
  const jobs: Job[] = [];
  while (jobs.length < deliveries) {
    const { envelope, body } = buildEnvelope(type, example);
    for (let e = 0; e < endpoints && jobs.length < deliveries; e++) jobs.push({ e, id: envelope.id, b: body });
  }
  return jobs;
}

async function enqueue(args: PeerQueueArgs): Promise<{ ms: number }> {
  const started = performance.now();
  const jobs = makeJobs(args.type, args.deliveries, args.urls.length);
  if (args.kind === 'pg-boss') {
    const boss = new PgBoss({ connectionString: args.databaseUrl, max: 2, ...PGBOSS_OPTIONS });
    boss.on('error', (error) => console.error(error));
    await boss.start();
    await boss.createQueue(args.queue);
    for (let i = 0; i < jobs.length; i += 2000)
      await boss.insert(jobs.slice(i, i + 2000).map((data) => ({ name: args.queue, data, retryLimit: 2, retryDelay: 1 })));
    await boss.stop({ graceful: false, wait: true });
  } else if (args.kind === 'bullmq') {
    const queue = new Queue(args.queue, { connection: { ...args.redis!, maxRetriesPerRequest: null } });
    for (let i = 0; i < jobs.length; i += 2000)
      await queue.addBulk(
        jobs.slice(i, i + 2000).map((data) => ({ name: 'deliver', data, opts: { attempts: 3, backoff: { type: 'fixed', delay: 1000 } } })),
      );
    await queue.close();
  }
  return { ms: Math.round(performance.now() - started) };
}

interface Contender {
  drain(): Promise<PeerDrain>;
  completed(): Promise<number>;
  stop(): Promise<void>;
}

function ceilingContender(args: PeerQueueArgs, sender: SignedSender): Contender {
  const jobs = makeJobs(args.type, args.deliveries, args.urls.length);
  let ok = 0;
  return {
    async drain() {
      const started = performance.now();
      let next = 0;
      let failed = 0;
      const loop = async (): Promise<void> => {
        while (next < jobs.length) {
          const job = jobs[next++];
          const status = await sender.send(job.e, job.id, job.b);
          if (status >= 200 && status < 300) ok++;
          else failed++;
        }
      };
      await Promise.all(Array.from({ length: args.concurrency }, loop));
      return { ok, failed, ms: Math.round(performance.now() - started) };
    },
    completed: () => Promise.resolve(ok),
    stop: () => sender.close(),
  };
}

async function pgBossContender(args: PeerQueueArgs, sender: SignedSender): Promise<Contender> {
  const loops = args.loops ?? 4;
  const boss = new PgBoss({ connectionString: args.databaseUrl, max: loops + 2, ...PGBOSS_OPTIONS });
  boss.on('error', (error) => console.error(error));
  await boss.start();
  return {
    async drain() {
      const started = performance.now();
      let ok = 0;
      let failed = 0;
      const loop = async (): Promise<void> => {
        let idle = 0;
        // Until the queue stays empty for a second (retries of failed jobs come back after 1 s).
        while (idle < 50) {
          const jobs = await boss.fetch<Job>(args.queue, { batchSize: args.batchSize ?? 100 });
          if (jobs.length === 0) {
            idle++;
            await sleep(20);
            continue;
          }
          idle = 0;
          const statuses = await Promise.all(jobs.map((job) => sender.send(job.data.e, job.data.id, job.data.b)));
          const done = jobs.filter((_, i) => statuses[i] >= 200 && statuses[i] < 300).map((job) => job.id);
          const notDone = jobs.filter((_, i) => !(statuses[i] >= 200 && statuses[i] < 300)).map((job) => job.id);
          if (done.length > 0) await boss.complete(args.queue, done);
          if (notDone.length > 0) await boss.fail(args.queue, notDone);
          ok += done.length;
          failed += notDone.length;
        }
      };
      await Promise.all(Array.from({ length: loops }, loop));
      return { ok, failed, ms: Math.round(performance.now() - started) };
    },
    async completed() {
      const { rows } = await boss
        .getDb()
        .executeSql(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'`, [args.queue]);
      return (rows[0] as { n: number }).n;
    },
    async stop() {
      await boss.stop({ graceful: false, wait: true });
      await sender.close();
    },
  };
}

function bullmqContender(args: PeerQueueArgs, sender: SignedSender): Contender {
  const connection = { ...args.redis!, maxRetriesPerRequest: null };
  let ok = 0;
  let failed = 0;
  const worker = new Worker<Job>(
    args.queue,
    async (job) => {
      const status = await sender.send(job.data.e, job.data.id, job.data.b);
      if (status < 200 || status >= 300) throw new Error(`HTTP ${status}`);
    },
    { connection, concurrency: args.concurrency, autorun: false },
  );
  worker.on('completed', () => void ok++);
  worker.on('failed', () => void failed++);
  worker.on('error', (error) => console.error(error));
  return {
    async drain() {
      const started = performance.now();
      void worker.run();
      let last = -1;
      let lastChange = Date.now();
      // Until every job completed, or nothing moved for 5 s.
      while (ok < args.deliveries && Date.now() - lastChange < 5000) {
        if (ok + failed !== last) {
          last = ok + failed;
          lastChange = Date.now();
        }
        await sleep(20);
      }
      return { ok, failed, ms: Math.round(performance.now() - started) };
    },
    async completed() {
      const queue = new Queue(args.queue, { connection });
      try {
        return await queue.getCompletedCount();
      } finally {
        await queue.close();
      }
    },
    async stop() {
      await worker.close(true);
      const queue = new Queue(args.queue, { connection });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await sender.close();
    },
  };
}

async function work(args: PeerQueueArgs): Promise<void> {
  const sender = new SignedSender(args.urls, args.secrets, { connectionsPerOrigin: args.connectionsPerOrigin, timeoutMs: args.timeoutMs });
  const contender =
    args.kind === 'pg-boss'
      ? await pgBossContender(args, sender)
      : args.kind === 'bullmq'
        ? bullmqContender(args, sender)
        : ceilingContender(args, sender);
  exitWithParent();
  serveRpc({
    drain: () => contender.drain(),
    completed: () => contender.completed(),
    stop: async () => {
      await contender.stop();
      return true;
    },
  });
  await send({ type: 'ready', pid: process.pid });
}

const args = childArgs<PeerQueueArgs>();
if (args.mode === 'enqueue') runMain(() => enqueue(args));
else
  work(args).catch(async (error: unknown) => {
    await send({ type: 'error', message: String((error as Error)?.stack ?? error) });
    process.exit(1);
  });
