import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EventPublisher } from '../src/events/event-publisher';
import { TRACING_SDK, type TracingSdk } from '../src/observability/tracing-sdk';
import { startApp, type TestApp } from './support/app';
import { ChildApp } from './support/child-app';
import { createTestDatabase, type TestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { createWebhook, orderData } from './support/fixtures';
import { Receiver, type ReceivedRequest } from './support/receiver';

/**
 * OpenTelemetry (docs/operations.md#tracing): a publish and each attempt of its deliveries are
 * spans of one trace, exported over OTLP/HTTP, and each request carries the attempt span's
 * `traceparent`. The export runs in real processes (ChildApp): the exporter loads node:http with
 * a dynamic import, which Jest's module sandbox does not allow.
 */

/** An OTLP/JSON span as the exporter sends it. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: number | string; boolValue?: boolean } }>;
  status: { code?: number; message?: string };
  service: string;
}

/** A local OTLP/HTTP receiver: POST /v1/traces in the JSON encoding, every span kept with its service's name. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  readonly requests: Array<{ path: string; contentType?: string }> = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const holder: { receiver?: OtlpReceiver } = {};
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        holder.receiver!.requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] });
        if (req.method === 'POST' && req.url === '/v1/traces') holder.receiver!.take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return holder.receiver;
  }

  private take(request: {
    resourceSpans: Array<{
      resource: { attributes: OtlpSpan['attributes'] };
      scopeSpans: Array<{ spans: Array<Omit<OtlpSpan, 'service'>> }>;
    }>;
  }): void {
    for (const { resource, scopeSpans } of request.resourceSpans) {
      const service = resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      for (const { spans } of scopeSpans) for (const span of spans) this.spans.push({ ...span, service });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function attributesOf(span: OtlpSpan): Record<string, string | number | boolean | undefined> {
  return Object.fromEntries(
    span.attributes.map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue),
    ]),
  );
}

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

describe('traces from publish to attempt, across processes', () => {
  let db: TestDatabase;
  let otlp: OtlpReceiver;
  let receiver: Receiver;
  const apps: ChildApp[] = [];

  beforeAll(async () => {
    [db, otlp, receiver] = await Promise.all([createTestDatabase(), OtlpReceiver.start(), Receiver.start()]);
    const env = (service: string, role: string) => ({
      ROLE: role,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: service,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      RETRY_SCHEDULE_MS: '0,300',
      RETRY_JITTER: '0',
    });
    // One process publishes, another attempts: the publish's context reaches the worker through the database.
    apps.push(await ChildApp.start({ name: 'tracing-api', databaseUrl: db.url, env: env('hookline-api', 'api'), startDeadlineMs: 90_000 }));
    apps.push(
      await ChildApp.start({ name: 'tracing-worker', databaseUrl: db.url, env: env('hookline-worker', 'worker'), startDeadlineMs: 90_000 }),
    );
  }, 200_000);

  afterAll(async () => {
    await Promise.all(apps.map(async (app) => app.kill('SIGTERM').then(() => app.waitForExit(30_000))));
    await Promise.all([otlp?.close(), receiver?.close(), db?.drop()]);
  });

  it('exports the publish, a failed attempt and its retry as one trace under the client’s span, with the traceparent sent', async () => {
    const [api] = apps;
    let calls = 0;
    receiver.respondWith((_request, res) => {
      calls += 1;
      res.writeHead(calls === 1 ? 500 : 200, { 'content-type': 'text/plain' });
      res.end(calls === 1 ? 'not yet' : 'ok');
    });
    const created = await api.api('/webhooks', {
      method: 'POST',
      json: { name: 'traced', url: `${receiver.url}/traced`, events: ['order.created'] },
    });
    expect(created.status).toBe(201);
    const webhook = (await created.json()) as { id: string };
    const published = await api.api('/events', {
      method: 'POST',
      json: { type: 'order.created', data: orderData(1) },
      headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    });
    expect(published.status).toBe(202);
    const event = (await published.json()) as { id: string };

    const requests = await receiver.waitFor(2, (r) => r.path === '/traced', 20_000);
    const spans = await eventually(
      async () => otlp.spans.filter((span) => span.traceId === CLIENT_TRACE),
      (found) => found.length >= 3,
      { deadlineMs: 20_000, what: 'the publish span and two attempt spans at the OTLP receiver' },
    );

    const publish = spans.find((span) => span.name === 'publish order.created')!;
    expect(publish).toMatchObject({ parentSpanId: CLIENT_SPAN, kind: SpanKind.PRODUCER + 1, service: 'hookline-api' });
    expect(attributesOf(publish)).toMatchObject({
      'hookline.store.id': 'st_default',
      'hookline.event.type': 'order.created',
      'hookline.event.id': event.id,
      'hookline.event.deliveries': 1,
    });

    const attempts = spans
      .filter((span) => span.name === 'deliver order.created')
      .sort((a, b) => Number(attributesOf(a)['hookline.attempt.number']) - Number(attributesOf(b)['hookline.attempt.number']));
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({ parentSpanId: publish.spanId, kind: SpanKind.CLIENT + 1, service: 'hookline-worker' });
      expect(attributesOf(attempt)).toMatchObject({
        'hookline.store.id': 'st_default',
        'hookline.endpoint.id': webhook.id,
        'hookline.event.id': event.id,
        'hookline.event.type': 'order.created',
        'http.request.method': 'POST',
        'server.address': '127.0.0.1',
      });
      expect(attributesOf(attempt)['hookline.attempt.duration_ms']).toEqual(expect.any(Number));
    }
    const [failed, retried] = attempts;
    expect(attributesOf(failed)).toMatchObject({
      'hookline.attempt.number': 1,
      'http.response.status_code': 500,
      'error.type': '500',
      'hookline.delivery.status': 'pending',
      'hookline.retry.delay_ms': 300,
    });
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'HTTP 500' });
    expect(attributesOf(retried)).toMatchObject({
      'hookline.attempt.number': 2,
      'http.response.status_code': 200,
      'hookline.delivery.status': 'succeeded',
    });
    expect(retried.status.code ?? SpanStatusCode.UNSET).toBe(SpanStatusCode.UNSET);

    // Each request carried its own attempt span's context.
    expect(requests.map((request) => request.headers.traceparent)).toEqual(attempts.map((a) => `00-${CLIENT_TRACE}-${a.spanId}-01`));
    expect(otlp.requests.every((request) => request.contentType === 'application/json')).toBe(true);
  }, 60_000);
});

/** Registers an in-memory SDK as the process's, as startTracingSdk registers the OTLP one. */
function inMemorySdk(exporter: InMemorySpanExporter): TracingSdk {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    provider,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

describe('traces in the process that publishes through EventPublisher', () => {
  let t: TestApp;
  let receiver: Receiver;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({ overrides: [{ provide: TRACING_SDK, useValue: inMemorySdk(exporter) }] });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  beforeEach(() => exporter.reset());

  const spansOf = (traceId: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);

  it('joins the caller’s active span when a module publishes, and sends the attempt’s traceparent', async () => {
    await createWebhook(t, `${receiver.url}/in-process`);
    const publisher = t.app.get(EventPublisher);
    const caller = trace.getTracer('store-orders');
    const traceId = await caller.startActiveSpan('place order', async (span) => {
      await publisher.publish('st_default', 'order.created', orderData(2));
      span.end();
      return span.spanContext().traceId;
    });

    const [request] = await receiver.waitFor(1, (r) => r.path === '/in-process');
    const spans = await eventually(
      async () => spansOf(traceId),
      (found) => found.some((span) => span.name === 'deliver order.created'),
      { what: 'the attempt span' },
    );
    const callerSpan = spans.find((span) => span.name === 'place order')!;
    const publish = spans.find((span) => span.name === 'publish order.created')!;
    const attempt = spans.find((span) => span.name === 'deliver order.created')!;
    expect(publish.parentSpanContext?.spanId).toBe(callerSpan.spanContext().spanId);
    expect(attempt.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(attempt.attributes['http.response.status_code']).toBe(200);
    expect(request.headers.traceparent).toBe(`00-${traceId}-${attempt.spanContext().spanId}-01`);
  });

  it('traces a test delivery under the traceparent of the request that asked for it', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/probe`);
    const res = await t.api(`/webhooks/${webhook.id}/test`, {
      method: 'POST',
      headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    });
    expect(res.status).toBe(200);
    const [request] = await receiver.waitFor(1, (r: ReceivedRequest) => r.path === '/probe');
    const spans = spansOf(CLIENT_TRACE);
    const publish = spans.find((span) => span.name === 'publish webhook.test')!;
    const attempt = spans.find((span) => span.name === 'deliver webhook.test')!;
    expect(publish.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
    expect(attempt.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(attempt.attributes).toMatchObject({ 'hookline.endpoint.id': webhook.id, 'http.response.status_code': 200 });
    expect(request.headers.traceparent).toBe(`00-${CLIENT_TRACE}-${attempt.spanContext().spanId}-01`);
  });
});

describe('with tracing off', () => {
  it('starts no SDK and sends no traceparent', async () => {
    const receiver = await Receiver.start();
    const t = await startApp();
    try {
      await createWebhook(t, `${receiver.url}/untraced`);
      await t.api('/events', {
        method: 'POST',
        json: { type: 'order.created', data: orderData(3) },
        headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      });
      const [request] = await receiver.waitFor(1, (r) => r.path === '/untraced');
      expect(request.headers.traceparent).toBeUndefined();
      expect(t.app.get(TRACING_SDK)).toBeNull();
      expect(trace.getTracer('x').startSpan('y').isRecording()).toBe(false);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});
