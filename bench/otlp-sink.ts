/**
 * A local OTLP/HTTP sink for measuring what tracing costs: accepts POST /v1/traces (protobuf or
 * JSON), answers 200 at once and counts requests and bytes, printed when it stops (SIGINT or
 * SIGTERM). Point Hookline at it with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:<port>
 * (`npm run bench` passes every OTEL_* variable on to Hookline).
 *
 *   node -r ts-node/register/transpile-only bench/otlp-sink.ts [port, default 4318]
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 4318);
let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/traces') requests += 1;
    res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf' });
    res.end();
  });
});
server.listen(port, '127.0.0.1', () => process.stdout.write(`OTLP sink on http://127.0.0.1:${port}\n`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stdout.write(`OTLP sink: ${requests} export requests, ${(bytes / 1e6).toFixed(1)} MB\n`);
    server.close(() => process.exit(0));
  });
}
