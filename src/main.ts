import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import pino from 'pino';
import { AppModule } from './app.module';
import { BootstrapKey } from './auth/bootstrap-key';
import { configureApp } from './configure-app';
import { HooklineExpressAdapter } from './common/express-adapter';
import { limitHeapGrowth } from './common/heap-growth';
import { StartupRefusal } from './common/startup-refusal';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { EmbeddedPostgres, EmbeddedPostgresError } from './database/embedded-postgres';
import { ShutdownState } from './observability/shutdown-state';
import { readyMessage } from './ready-message';

async function bootstrap(): Promise<void> {
  limitHeapGrowth();
  let config: AppConfig;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  // Synchronous like the application's logger, so every line is out before the ready block below.
  const log = pino(
    { level: config.logLevel, base: { service: config.serviceName.toLowerCase(), pid: process.pid } },
    pino.destination({ dest: 1, sync: true }),
  );

  let embedded: EmbeddedPostgres | undefined;
  try {
    embedded = config.databaseUrl
      ? undefined
      : await EmbeddedPostgres.start(
          config.dataDir,
          { info: (m) => log.info(m), warn: (m) => log.warn(m) },
          // EMBEDDED_PG_LOG=1 shows the server's own log too (always kept in DATA_DIR/postgres.log).
          { forwardServerLog: process.env.EMBEDDED_PG_LOG === '1' },
        );
  } catch (error) {
    // Its message says what to do; a stack trace would only bury it.
    if (!(error instanceof EmbeddedPostgresError)) throw error;
    log.fatal(error.message);
    process.exit(1);
  }
  if (embedded) config = config.with({ databaseUrl: embedded.url, embeddedDatabase: true });

  let app: NestExpressApplication;
  let generatedKey: string | undefined;
  try {
    app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new HooklineExpressAdapter(), {
      bufferLogs: true,
      bodyParser: false,
      // A failed start comes back here rather than to Nest's handler (which prints a stack and
      // exits), and the lines buffered meanwhile are printed only where they help (below).
      abortOnError: false,
      autoFlushLogs: false,
    });
    configureApp(app, config);
    app.flushLogs();
    await app.listen(config.port, config.host);
    generatedKey = await app.get(BootstrapKey).generateIfNone();
  } catch (error) {
    // A refusal's message says what to do, in one line; anything else gets what led to it.
    if (error instanceof StartupRefusal) {
      log.fatal(error.message);
    } else {
      Logger.flush();
      log.fatal({ err: error }, 'could not start');
    }
    await embedded?.stop();
    process.exit(1);
  }
  const port = (app.getHttpServer().address() as { port: number } | null)?.port ?? config.port;
  log.info(`${config.serviceName} (ROLE=${config.role}) listening on http://${config.host}:${port}`);
  // Plain text after the last start-up log line, on stdout even at LOG_LEVEL=silent: the one
  // place a generated key is ever shown (never through the logger, whose lines are kept).
  process.stdout.write(
    readyMessage({
      serviceName: config.serviceName,
      role: config.role,
      host: config.host,
      port,
      adminApiKeySet: config.adminApiKey !== undefined,
      generatedKey,
    }),
  );

  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal} received: finishing in-flight work, then stopping`);
    const deadline = setTimeout(() => {
      log.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 10_000);
    try {
      app.get(ShutdownState).beginDraining();
      await app.close();
      await embedded?.stop();
      clearTimeout(deadline);
      log.info('stopped');
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', (signal) => void shutdown(signal));
  process.on('SIGINT', (signal) => void shutdown(signal));
}

void bootstrap();
