/**
 * Hookline as the benchmark runs it: the real AppModule, booted exactly as src/main.ts does
 * (limitHeapGrowth, loadConfig, NestFactory.create with HooklineExpressAdapter and without Nest's
 * body parser, configureApp, listen), plus one bare route, GET /api/v1/external/bench/bare →
 * {"ok":true} (@Public), through the same middleware, as the management API's ceiling in the same
 * process. Configured by the environment like Hookline; DATABASE_URL is required (the
 * orchestrator creates the database).
 *
 * `profileStart` / `profileStop` take a V8 CPU profile of one phase (the inspector, in process).
 * BENCH_SQL_STATS=1 times every statement on the pg driver (per statement text), readable with
 * the `sqlStats` call: where the database time of a scenario goes.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Controller, DynamicModule, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ApiExcludeController } from '@nestjs/swagger';
import { Client } from 'pg';
import { AppModule } from '../src/app.module';
import { Public } from '../src/common/public.decorator';
import { HooklineExpressAdapter } from '../src/common/express-adapter';
import { configureApp } from '../src/configure-app';
import { limitHeapGrowth } from '../src/common/heap-growth';
import { AppConfig, loadConfig } from '../src/config/app-config';
import { exitWithParent, send, serveRpc } from './lib/child';
import { mainThreadRunQueueSeconds } from './lib/proc';
import { wallMs } from './lib/protocol';

@ApiExcludeController()
@Controller('bench')
class BareController {
  @Get('bare')
  @Public()
  bare(): { ok: boolean } {
    return { ok: true };
  }
}

@Module({})
class BenchAppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: BenchAppModule, imports: [AppModule.forRoot(config)], controllers: [BareController] };
  }
}

interface SqlStat {
  statement: string;
  calls: number;
  totalMs: number;
  maxMs: number;
}

const sqlStats = new Map<string, SqlStat>();
/** Statements slower than this are also kept one by one, with when they ended (`timeline`). */
const SLOW_SQL_MS = 10;
const slowSql: Array<[endedAt: number, ms: number, statement: string]> = [];
/**
 * The event loop's worst delay in each quarter second, and how long the main thread waited for a
 * CPU in it (Linux schedstat run delay): [end of the quarter, ms, ms].
 */
const loopDelays: Array<[at: number, maxMs: number, runQueueMs: number]> = [];

/** With BENCH_SQL_STATS=1: samples the event loop's delay, to line up with latency spikes. */
function sampleEventLoop(): void {
  const histogram = monitorEventLoopDelay({ resolution: 2 });
  histogram.enable();
  let waited = mainThreadRunQueueSeconds(process.pid);
  setInterval(() => {
    const now = mainThreadRunQueueSeconds(process.pid);
    loopDelays.push([wallMs(), histogram.max / 1e6, (now - waited) * 1000]);
    waited = now;
    if (loopDelays.length > 2_400) loopDelays.shift();
    histogram.reset();
  }, 250).unref();
}

function recordSql(text: unknown, ms: number): void {
  const statement = (typeof text === 'string' ? text : String((text as { text?: string })?.text ?? '?'))
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 120);
  let stat = sqlStats.get(statement);
  if (!stat) sqlStats.set(statement, (stat = { statement, calls: 0, totalMs: 0, maxMs: 0 }));
  stat.calls++;
  stat.totalMs += ms;
  stat.maxMs = Math.max(stat.maxMs, ms);
  if (ms >= SLOW_SQL_MS && slowSql.length < 10_000) slowSql.push([wallMs(), ms, statement.slice(0, 40)]);
}

/** Wraps pg's Client#query: time from handing the statement to a connection until its result. */
function timeSqlStatements(): void {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function timedQuery(this: unknown, ...args: unknown[]): unknown {
    const started = performance.now();
    const callbackAt = args.findIndex((arg) => typeof arg === 'function');
    if (callbackAt >= 0) {
      const callback = args[callbackAt] as (...results: unknown[]) => unknown;
      args[callbackAt] = (...results: unknown[]): unknown => {
        recordSql(args[0], performance.now() - started);
        return callback(...results);
      };
      return original.apply(this, args);
    }
    const returned = original.apply(this, args);
    if (returned && typeof (returned as Promise<unknown>).then === 'function') {
      (returned as Promise<unknown>).then(
        () => recordSql(args[0], performance.now() - started),
        () => recordSql(args[0], performance.now() - started),
      );
    }
    return returned;
  };
}

let profiler: Session | undefined;

function post(session: Session, method: string, params?: object): Promise<unknown> {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function profileStart(): Promise<boolean> {
  if (profiler) return false;
  profiler = new Session();
  profiler.connect();
  await post(profiler, 'Profiler.enable');
  await post(profiler, 'Profiler.setSamplingInterval', { interval: 500 });
  await post(profiler, 'Profiler.start');
  return true;
}

async function profileStop(path: string): Promise<string | undefined> {
  const session = profiler;
  if (!session) return undefined;
  profiler = undefined;
  const { profile } = (await post(session, 'Profiler.stop')) as { profile: unknown };
  session.disconnect();
  writeFileSync(path, JSON.stringify(profile));
  return path;
}

async function bootstrap(): Promise<void> {
  limitHeapGrowth();
  if (process.env.BENCH_SQL_STATS === '1') {
    timeSqlStatements();
    sampleEventLoop();
  }
  const config = loadConfig(process.env);
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required');
  const app = await NestFactory.create<NestExpressApplication>(BenchAppModule.forRoot(config), new HooklineExpressAdapter(), {
    bufferLogs: true,
    bodyParser: false,
  });
  configureApp(app, config);
  await app.listen(config.port, config.host);
  const { port } = app.getHttpServer().address() as { port: number };

  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    try {
      await app.close();
      process.exit(0);
    } catch (error) {
      process.stderr.write(`error during shutdown: ${String(error)}\n`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  exitWithParent(() => process.exit(1));
  serveRpc({
    sqlStats: () => [...sqlStats.values()].sort((a, b) => b.totalMs - a.totalMs),
    resetSqlStats: () => {
      sqlStats.clear();
      slowSql.length = 0;
      loopDelays.length = 0;
      return true;
    },
    timeline: () => ({ slowSql, loopDelays }),
    memory: () => process.memoryUsage(),
    gcMemory: async () => {
      const session = new Session();
      session.connect();
      await post(session, 'HeapProfiler.collectGarbage');
      session.disconnect();
      return process.memoryUsage();
    },
    profileStart: () => profileStart(),
    profileStop: (params) => profileStop((params as { path: string }).path),
  });
  await send({ type: 'ready', port, pid: process.pid });
}

bootstrap().catch(async (error: unknown) => {
  process.stderr.write(`could not start: ${String((error as Error)?.stack ?? error)}\n`);
  await send({ type: 'error', message: String(error) });
  process.exit(1);
});
