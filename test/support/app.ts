import type { ModuleMetadata } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { AppModule } from '../../src/app.module';
import { configureApp } from '../../src/configure-app';
import { HooklineExpressAdapter } from '../../src/common/express-adapter';
import { AppConfig, AppConfigValues, loadConfig } from '../../src/config/app-config';
import { createTestDatabase, TestDatabase } from './database';

/** The bootstrap key of every test app (ADMIN_API_KEY): it holds every scope in st_default. */
export const ADMIN_KEY = 'hl_test_admin_key_0123456789abcdef';
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  db: TestDatabase;
  baseUrl: string;
  /** fetch against the app's API (`path` relative to /api/v1/external), with the admin key by default. */
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Environment variables, as an operator would set them. */
  env?: Record<string, string>;
  /** Values to set directly on the validated config. */
  config?: Partial<AppConfigValues>;
  /** Reuse a database (e.g. a second instance on the same database). */
  db?: TestDatabase;
  /** Providers to replace (e.g. `{ provide: URL_RESOLVER, useValue: fakeResolver }`); the token must be bound in a module. */
  overrides?: Array<{ provide: unknown; useValue: unknown }>;
  /** Extra modules beside AppModule (e.g. the store-orders example that publishes through EventPublisher). */
  imports?: ModuleMetadata['imports'];
}

/** Boots the real AppModule on a fresh database and listens on a random loopback port. */
export async function startApp(options: StartOptions = {}): Promise<TestApp> {
  const db = options.db ?? (await createTestDatabase());
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.HOOKLINE_TEST_LOG_LEVEL ?? 'silent',
    ADMIN_API_KEY: ADMIN_KEY,
    SECRET_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    ...options.env,
    DATABASE_URL: db.url,
  }).with(options.config ?? {});

  const builder = Test.createTestingModule({ imports: [AppModule.forRoot(config), ...(options.imports ?? [])] });
  for (const { provide, useValue } of options.overrides ?? []) builder.overrideProvider(provide).useValue(useValue);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(new HooklineExpressAdapter(), {
    bodyParser: false,
    bufferLogs: true,
  });
  configureApp(app, config);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    app,
    config,
    db,
    baseUrl,
    api(path, init = {}) {
      const { key = ADMIN_KEY, json, headers, ...rest } = init;
      const allHeaders = new Headers(headers);
      if (key !== null) allHeaders.set('X-API-Key', key);
      if (json !== undefined) allHeaders.set('Content-Type', 'application/json');
      return fetch(`${baseUrl}/api/v1/external${path}`, {
        ...rest,
        headers: allHeaders,
        body: json !== undefined ? JSON.stringify(json) : rest.body,
      });
    },
    async close() {
      await app.close();
      if (!options.db) await db.drop();
    },
  };
}
