import type { AppConfig } from '../config/app-config';
import { API_PREFIX } from './api-prefix';

/**
 * The OpenAPI document's introduction. An integrator may have only /docs, so it carries the
 * receiver's side too: what a delivery looks like and how to verify it (docs/receivers.md says the
 * same at length). The values are this deployment's, from its configuration.
 */
export function openApiDescription(config: AppConfig): string {
  const userAgent = `${config.serviceName}-Webhook/1.0 (+${config.docsUrl})`;
  const attempts = config.retryScheduleMs.length;
  const { seed, standard } = config.signatureHeaders;
  const jitter = config.retryJitter > 0 ? ` Each delay is spread by up to ±${Math.round(config.retryJitter * 100)} %.` : '';
  const retries = config.retryScheduleMs
    .slice(1)
    .map((delay, index) => `attempt ${index + 2} about ${seconds(delay)} after attempt ${index + 1} failed`);
  return `Outbound webhooks for the store platform: register endpoints, publish events, and follow every delivery.
Every path is relative to the server URL, \`/${API_PREFIX}\`.

## Authentication

Send an API key in the \`X-API-Key\` header (the **Authorize** button here). Each operation names the
scope its key must hold (also in the operation's \`x-required-scopes\`): \`webhooks:read\`,
\`webhooks:write\`, \`events:write\`, \`api-keys:write\`, \`stores:write\` or \`portal:write\`. A key sees only its own
store: another store's ids answer 404.

A portal session (\`POST /portal-sessions\`) authenticates with its token instead, as
\`Authorization: Bearer <token>\`: it acts in one store, with \`webhooks:read\` (capability \`read\`) and
\`webhooks:write\` (capability \`manage\`) at most, and, when limited to some endpoints, sees those alone.

## Errors

Every error is JSON, \`{"statusCode": 400, "error": "Bad Request", "message": "…"}\`; for invalid input
\`message\` is a list with one sentence per problem, and nothing was changed. Request bodies are
JSON of at most 1 MiB (413 above). Over the rate limit, 429 says in \`Retry-After\` how many seconds to wait.
A request that carries a delivery's own headers (\`webhook-id\` or \`X-Webhook-ID\` together with a
signature header) is refused with 400: no delivery, relayed or not, calls this API.

## Deliveries

Each delivery is an HTTP \`POST\` of one event to the endpoint's URL. The body is the event's
envelope, the same bytes on every attempt:

\`\`\`json
{"id":"evt_…","type":"order.created","timestamp":"2026-11-25T10:00:00.000Z","data":{…}}
\`\`\`

\`id\` is the event's id, \`timestamp\` when it was published (ISO 8601 UTC), and \`data\` has the
shape that \`GET /event-types\` gives for its \`type\`. The request's headers:

| header | value |
|---|---|
| \`Content-Type\` | \`application/json\` |
| \`User-Agent\` | \`${userAgent}\` |
${standard ? STANDARD_ROWS : ''}${seed ? SEED_ROWS : ''}| the endpoint's \`headers\` | as set on the endpoint, on every attempt |

${standard ? 'The `webhook-*` headers follow the Standard Webhooks specification: its libraries (npm `standardwebhooks`, the `svix` SDKs) verify deliveries as they are.' : ''}

Any 2xx answer within ${seconds(config.deliveryTimeoutMs)} acknowledges. Anything else is a failed
attempt: another status (3xx too: redirects are never followed), no complete answer in time, a
refused or reset connection, a TLS error. A delivery has ${attempts} attempt${attempts === 1 ? '' : 's'}${
    retries.length > 0 ? ` (${retries.join(', ')})` : ''
  } unless its endpoint has its own \`retrySchedule\`; then it is \`failed\`, and \`POST /deliveries/{id}/retry\` sends the same event id and body again.${jitter}
Over its whole life, retries included, a delivery gets at most ${config.maxAttemptsPerDelivery} attempts.
A 429 or 503 with \`Retry-After\` (seconds or an HTTP date) puts the next attempt at least that far off
(at most ${seconds(config.retryAfterMaxMs)}). A 410 Gone ends the delivery at once and disables the endpoint
(\`disabledReason: "gone"\`) until it is re-enabled; so does failing for ${duration(config.endpointDisableAfterMs)} with no attempt succeeding
and at least ${config.endpointDisableMinFailures} deliveries ended \`failed\` (\`disabledReason: "failing"\`). An endpoint can subscribe to
\`webhook.disabled\` and \`webhook.delivery_failed\` to hear of the store's other endpoints' trouble.
Delivery is at least once (the same event can arrive twice) and in no promised order.

## Verifying a delivery

The secret is the \`whsec_…\` string in the answer to \`POST /webhooks\` (and to \`rotate-secret\`,
which can keep the old one signing beside the new one for an overlap: \`webhook-signature\` then
carries both, and \`X-Webhook-Signature\` the old one's).

With the Standard Webhooks library, on the \`webhook-*\` headers:

\`\`\`ts
import { Webhook } from 'standardwebhooks';
const event = new Webhook(secret).verify(rawBody, headers); // throws unless a signature matches and the time is recent
\`\`\`

By hand, on \`X-Webhook-Signature\`, before acting on a delivery:

1. Refuse an \`X-Webhook-Timestamp\` more than a few minutes from now (a replayed request).
2. Compute HMAC-SHA256 keyed with the whole secret, \`whsec_\` included, as UTF-8, over the
   timestamp, a \`.\`, and the raw body exactly as received (not re-serialised JSON).
3. Compare \`sha256=\` + its lowercase hex with \`X-Webhook-Signature\` in constant time; answer 401 if
   they differ.
4. Skip an \`X-Webhook-ID\` already processed, answer 2xx at once, and do the work afterwards.

Node.js, with the body as a Buffer (e.g. from \`express.raw({ type: 'application/json' })\`):

\`\`\`js
const crypto = require('node:crypto');

function verifyWebhook(secret, headers, rawBody, toleranceMs = 5 * 60 * 1000) {
  const timestamp = String(headers['x-webhook-timestamp'] ?? '');
  const signature = Buffer.from(String(headers['x-webhook-signature'] ?? ''));
  if (!/^\\d+$/.test(timestamp) || Math.abs(Date.now() - Number(timestamp)) > toleranceMs) return null;
  const expected = Buffer.from('sha256=' + crypto.createHmac('sha256', secret).update(timestamp + '.').update(rawBody).digest('hex'));
  if (signature.length !== expected.length || !crypto.timingSafeEqual(signature, expected)) return null;
  return JSON.parse(rawBody.toString('utf8')); // the envelope: {id, type, timestamp, data}
}
\`\`\`

Python, with \`headers\` a case-insensitive mapping such as Flask's \`request.headers\`:

\`\`\`python
import hashlib, hmac, json, time

def verify_webhook(secret: str, headers, raw_body: bytes, tolerance_ms=5 * 60 * 1000):
    timestamp = headers.get("X-Webhook-Timestamp", "")
    if not (timestamp.isascii() and timestamp.isdigit()) or abs(time.time() * 1000 - int(timestamp)) > tolerance_ms:
        return None
    expected = "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, headers.get("X-Webhook-Signature", "")):
        return None
    return json.loads(raw_body)
\`\`\`
`;
}

/** `5 d`, `12 h`, `90 s`: the largest unit that divides it. */
function duration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size} ${unit}`;
  }
  return seconds(ms);
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

const STANDARD_ROWS = `| \`webhook-id\` | the event id, the same on every attempt and retry: deduplicate on it |
| \`webhook-timestamp\` | the attempt's Unix time in seconds (new on each attempt) |
| \`webhook-signature\` | \`v1,\` + base64 HMAC-SHA256 over \`<webhook-id>.<webhook-timestamp>.<body>\`, keyed with the secret's bytes (the part after \`whsec_\`, base64-decoded); several entries, space separated, during a secret rotation |
`;

const SEED_ROWS = `| \`X-Webhook-ID\` | the event id, the same on every attempt and retry: deduplicate on it |
| \`X-Webhook-Timestamp\` | the attempt's Unix time in milliseconds (new on each attempt) |
| \`X-Webhook-Signature\` | \`sha256=\` + lowercase hex HMAC-SHA256(secret, \`<X-Webhook-Timestamp>.<body>\`), keyed with the whole secret string |
`;
