import { createHmac, timingSafeEqual } from 'node:crypto';

/** Why a delivery was refused. */
export type VerificationFailure = 'missing-header' | 'invalid-timestamp' | 'stale-timestamp' | 'invalid-signature' | 'invalid-body';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** How far the signed timestamp may be from now, either way (replay protection). Default 5 minutes. */
  toleranceMs?: number;
  /** The current time in ms (tests). */
  now?: number;
}

export interface WebhookEnvelope<D = Record<string, unknown>> {
  id: string;
  type: string;
  timestamp: string;
  data: D;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const value = bag[name] ?? Object.entries(bag).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * For receivers: checks a delivery before anything acts on it and returns its envelope.
 *
 * A delivery carries one or both of two signature sets, and either verifies it:
 *
 * - Standard Webhooks: `webhook-signature` holds one or more `v1,<base64>` entries (space
 *   separated; two during a secret rotation), each an HMAC-SHA256 over
 *   `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the secret's bytes (the part after
 *   `whsec_`, base64-decoded); `webhook-timestamp` is in seconds.
 * - Hookline's own: `X-Webhook-Signature` is `sha256=` + hex HMAC-SHA256 over
 *   `<X-Webhook-Timestamp>.<raw body>` keyed with the whole `whsec_…` string; the timestamp is in ms.
 *
 * Pass one secret, or during a rotation both (new and old): any of them may match. Signatures are
 * computed over the body exactly as received, before any JSON parsing, and compared in constant
 * time. A timestamp further than `toleranceMs` from now is refused, so a captured request cannot be
 * replayed later. Deduplicate on the event id (`webhook-id` = `X-Webhook-ID` = envelope id) too:
 * delivery is at least once.
 *
 * @throws WebhookVerificationError (answer 401 and do not process the event)
 */
export function verifyWebhook(
  secret: string | readonly string[],
  headers: HeaderBag,
  rawBody: string | Buffer,
  options: VerifyOptions = {},
): WebhookEnvelope {
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const now = options.now ?? Date.now();
  const toleranceMs = options.toleranceMs ?? 5 * 60_000;
  const standard = header(headers, 'webhook-signature');
  const seed = header(headers, 'x-webhook-signature');
  if (!standard && !seed) {
    throw new WebhookVerificationError('missing-header', 'neither webhook-signature nor X-Webhook-Signature is present');
  }
  // Either set verifies; when both are present and one fails, the other's verdict stands.
  let failure: WebhookVerificationError | undefined;
  for (const check of [standard ? verifyStandard : undefined, seed ? verifySeed : undefined]) {
    if (!check) continue;
    try {
      check(secrets, headers, body, now, toleranceMs);
      failure = undefined;
      break;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      failure ??= error;
    }
  }
  if (failure) throw failure;

  try {
    return JSON.parse(body.toString('utf8')) as WebhookEnvelope;
  } catch {
    throw new WebhookVerificationError('invalid-body', 'the body is not JSON');
  }
}

function checkTimestamp(name: string, value: string | undefined, unitMs: number, now: number, toleranceMs: number): void {
  if (!value) throw new WebhookVerificationError('missing-header', `${name} is required with its signature`);
  if (!/^\d{1,16}$/.test(value)) throw new WebhookVerificationError('invalid-timestamp', `${name} is not a Unix time`);
  if (Math.abs(now - Number(value) * unitMs) > toleranceMs) {
    throw new WebhookVerificationError('stale-timestamp', `${name} is more than ${toleranceMs} ms away from now`);
  }
}

function sameBytes(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** webhook-id, webhook-timestamp (s), webhook-signature: `v1,<base64>` entries. */
function verifyStandard(secrets: string[], headers: HeaderBag, body: Buffer, now: number, toleranceMs: number): void {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  if (!id) throw new WebhookVerificationError('missing-header', 'webhook-id is required with webhook-signature');
  checkTimestamp('webhook-timestamp', timestamp, 1000, now, toleranceMs);
  const given = header(headers, 'webhook-signature')!
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  for (const secret of secrets) {
    const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
    if (given.some((signature) => sameBytes(signature, expected))) return;
  }
  throw new WebhookVerificationError('invalid-signature', 'webhook-signature does not match');
}

/** X-Webhook-Timestamp (ms), X-Webhook-Signature: `sha256=<hex>` keyed with the whole secret string. */
function verifySeed(secrets: string[], headers: HeaderBag, body: Buffer, now: number, toleranceMs: number): void {
  const timestamp = header(headers, 'x-webhook-timestamp');
  checkTimestamp('X-Webhook-Timestamp', timestamp, 1, now, toleranceMs);
  const given = header(headers, 'x-webhook-signature')!;
  // Written out rather than calling the sender's signing code: this file is meant to be copied into
  // receivers' code bases on its own (the unit spec checks that the two agree).
  for (const secret of secrets) {
    const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
    if (sameBytes(given, expected)) return;
  }
  throw new WebhookVerificationError('invalid-signature', 'X-Webhook-Signature does not match');
}
