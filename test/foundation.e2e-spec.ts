import { DataSource } from 'typeorm';
import { dataSourceOptions, MIGRATIONS } from '../src/database/data-source-options';
import { runMigrationsLocked } from '../src/database/run-migrations';
import { startApp, TestApp } from './support/app';
import { adminQuery, createTestDatabase } from './support/database';

async function until<T>(probe: () => Promise<T>, accept: (value: T) => boolean, deadlineMs = 10_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('foundation (real app, real PostgreSQL)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('applies every migration to an empty database at start', async () => {
    const applied = await t.db.query<{ name: string }>('SELECT name FROM migrations ORDER BY id');
    expect(applied.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    const tables = await t.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    );
    expect(tables.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(['api_keys', 'deliveries', 'delivery_attempts', 'events', 'stores', 'webhooks']),
    );
    const [store] = await t.db.query<{ id: string; name: string }>(`SELECT id, name FROM stores`);
    expect(store).toEqual({ id: 'st_default', name: 'default' });
  });

  it('answers GET /health with 200 while the database is up, also under the API prefix', async () => {
    for (const path of ['/health', '/api/v1/external/health']) {
      const res = await fetch(`${t.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'ok', info: { database: { status: 'up' } } });
    }
  });

  it('answers 404 with the error shape for an unknown route, with a request id', async () => {
    const res = await t.api('/no-such-route');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/\S+/);
    expect(await res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: expect.any(String) });
  });

  it('echoes a caller-supplied X-Request-Id', async () => {
    const res = await t.api('/nothing', { headers: { 'X-Request-Id': 'trace-abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-abc-123');
  });

  it('answers malformed JSON with 400 in the error shape, never HTML', async () => {
    const res = await t.api('/anything', { method: 'POST', body: '{"name": ', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String) });
    expect(JSON.stringify(body)).not.toMatch(/<html|at .*\.js:\d+/i);
    expect(res.headers.get('x-request-id')).toMatch(/\S+/);
  });

  it('refuses a body over 1 MiB with 413 and accepts one just under it', async () => {
    const big = JSON.stringify({ blob: 'x'.repeat(1024 * 1024) });
    const res = await t.api('/anything', { method: 'POST', body: big, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ statusCode: 413, error: 'Payload Too Large', message: expect.stringContaining('1 MiB') });

    const small = JSON.stringify({ blob: 'x'.repeat(1024 * 1024 - 100) });
    const ok = await t.api('/anything', { method: 'POST', body: small, headers: { 'Content-Type': 'application/json' } });
    expect(ok.status).toBe(404); // parsed, then no such route
  });

  it('serves Prometheus metrics with HTTP request counts and durations', async () => {
    await fetch(`${t.baseUrl}/health`);
    const res = await fetch(`${t.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/health",status="200"\} \d+/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{/);
    expect(text).toMatch(/process_resident_memory_bytes/);
  });

  it('serves Swagger UI at /docs and the OpenAPI document at /docs-json', async () => {
    const ui = await fetch(`${t.baseUrl}/docs`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/swagger-ui/i);
    const doc = await fetch(`${t.baseUrl}/docs-json`);
    expect(doc.status).toBe(200);
    const openapi = (await doc.json()) as { openapi: string; components: { securitySchemes: Record<string, unknown> } };
    expect(openapi.openapi).toMatch(/^3\./);
    expect(openapi.components.securitySchemes['api-key']).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it('answers 503 on /health while its database refuses connections, and 200 once it is back', async () => {
    await adminQuery(`ALTER DATABASE ${t.db.name} WITH ALLOW_CONNECTIONS false`);
    await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [t.db.name]);
    try {
      const down = await until(
        () => fetch(`${t.baseUrl}/health`),
        (res) => res.status === 503,
      );
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ status: 'error', error: { database: { status: 'down' } } });
    } finally {
      await adminQuery(`ALTER DATABASE ${t.db.name} WITH ALLOW_CONNECTIONS true`);
    }
    const up = await until(
      () => fetch(`${t.baseUrl}/health`),
      (res) => res.status === 200,
    );
    expect(up.status).toBe(200);
  });
});

describe('migrations under the advisory lock', () => {
  it('lets several instances start together on an empty database and applies each migration once', async () => {
    const db = await createTestDatabase();
    const sources = await Promise.all([1, 2, 3].map(() => new DataSource(dataSourceOptions(db.url, 2)).initialize()));
    try {
      await Promise.all(sources.map((source) => runMigrationsLocked(source)));
      const applied = await db.query<{ name: string }>('SELECT name FROM migrations');
      expect(applied).toHaveLength(MIGRATIONS.length);
    } finally {
      await Promise.all(sources.map((source) => source.destroy()));
      await db.drop();
    }
  });
});
