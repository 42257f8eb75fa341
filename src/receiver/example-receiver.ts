/**
 * A runnable receiver that verifies Hookline's deliveries, as an integrator would write one:
 *
 *   WEBHOOK_SECRET=whsec_… PORT=4000 npm run example:receiver
 *
 * It reads the raw body, verifies the signature and the timestamp before doing anything else,
 * answers 401 when they do not hold, skips a repeated X-Webhook-ID (delivery is at least once),
 * and answers 200 `{"received":true}` at once, leaving the work to happen afterwards.
 *
 * To watch retries, make it fail on purpose: `STATUS=500` answers every delivery with that
 * status, `FAIL_FIRST=2` fails the first two attempts of each event (with 500, or STATUS) and
 * accepts the third (docs/receivers.md#the-example-receiver).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, WebhookEnvelope, WebhookVerificationError } from './verify-webhook';

/** A command-line example: its output is for the person running it, one line per delivery. */
const say = (line: string): boolean => process.stdout.write(`${line}\n`);
const stop = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

const port = whole('PORT', 4000, 0, 65_535);
const status = whole('STATUS', 200, 200, 599);
const failFirst = whole('FAIL_FIRST', 0, 0, 1_000);
/** What a failure answers: STATUS if that is one already, else 500. */
const failStatus = status >= 300 ? status : 500;
const hookUrl = (p: number): string => `http://localhost:${p}/hooks`;

// Several secrets, comma separated, during a rotation's overlap (whsec_ secrets hold no commas).
const secrets = (process.env.WEBHOOK_SECRET ?? '')
  .split(',')
  .map((part) => part.trim())
  .filter(Boolean);
if (secrets.length === 0 || !secrets.every((secret) => secret.startsWith('whsec_'))) {
  stop(
    [
      "Set WEBHOOK_SECRET to the endpoint's signing secret (whsec_…). It exists once the endpoint is registered:",
      `register ${hookUrl(port)} with POST /api/v1/external/webhooks (or in the dashboard) and take "secret" from`,
      'the response, which shows it only that once. Then:',
      `  WEBHOOK_SECRET=whsec_… PORT=${port} npm run example:receiver`,
    ].join('\n'),
  );
}

const seen = new Set<string>(); // use a database table with a unique key in a real receiver
const attempts = new Map<string, number>();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let event: WebhookEnvelope;
    try {
      event = verifyWebhook(secrets, req.headers, Buffer.concat(chunks));
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      say(`refused: ${error.message}`);
      res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid signature');
      return;
    }
    const attempt = (attempts.get(event.id) ?? 0) + 1;
    attempts.set(event.id, attempt);
    const answer = attempt <= failFirst ? failStatus : status;
    if (answer >= 300) {
      // Failed on purpose: not processed, so the retry is handled as new.
      say(`${event.type} ${event.id} attempt ${attempt}: answered ${answer} on purpose`);
      res.writeHead(answer, { 'content-type': 'application/json' }).end('{"received":false}');
      return;
    }
    if (seen.has(event.id)) {
      say(`duplicate ${event.id} skipped`);
    } else {
      seen.add(event.id);
      say(`${event.type} ${event.id} ${JSON.stringify(event.data)}`);
    }
    res.writeHead(answer, { 'content-type': 'application/json' }).end('{"received":true}');
  });
});

server.listen(port, () => {
  const url = hookUrl((server.address() as AddressInfo).port);
  const lines = [
    `example receiver on ${url}`,
    `  deliveries are verified with WEBHOOK_SECRET (during a secret rotation: new,old), the secret in the response that registered ${url}`,
  ];
  if (failFirst > 0) lines.push(`  FAIL_FIRST=${failFirst}: the first ${failFirst} attempts of each event answer ${failStatus}`);
  else if (status !== 200) lines.push(`  STATUS=${status}: every delivery is answered ${status}`);
  say(lines.join('\n'));
});

/** An environment variable holding a whole number from `min` to `max`, or `fallback` when unset. */
function whole(name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name]?.trim();
  if (!text) return fallback;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) stop(`${name} must be a whole number from ${min} to ${max}`);
  return value;
}
