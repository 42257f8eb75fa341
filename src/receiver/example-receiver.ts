/**
 * A runnable receiver that verifies Hookline's deliveries, as an integrator would write one:
 *
 *   WEBHOOK_SECRET=whsec_… PORT=4000 npm run example:receiver
 *
 * It reads the raw body, verifies the signature and the timestamp before doing anything else,
 * answers 401 when they do not hold, skips a repeated X-Webhook-ID (delivery is at least once),
 * and answers 200 `{"received":true}` at once, leaving the work to happen afterwards.
 */
import { createServer } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from './verify-webhook';

/** A command-line example: its output is for the person running it, one line per delivery. */
const say = (line: string): boolean => process.stdout.write(`${line}\n`);

const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith('whsec_')) {
  process.stderr.write('Set WEBHOOK_SECRET to the endpoint secret (whsec_…) shown when it was created.\n');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 4000);
const seen = new Set<string>(); // use a database table with a unique key in a real receiver

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      const event = verifyWebhook(secret, req.headers, Buffer.concat(chunks));
      if (seen.has(event.id)) {
        say(`duplicate ${event.id} skipped`);
      } else {
        seen.add(event.id);
        say(`${event.type} ${event.id} ${JSON.stringify(event.data)}`);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      say(`refused: ${error.message}`);
      res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid signature');
    }
  });
}).listen(port, () => say(`example receiver on http://localhost:${port}/`));
