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
  /** How far X-Webhook-Timestamp may be from now, either way (replay protection). Default 5 minutes. */
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
 * The signature is `sha256=` + hex HMAC-SHA256, keyed with the whole `whsec_…` secret, over
 * `<X-Webhook-Timestamp>.<raw body>`: the body exactly as received, before any JSON parsing. It is
 * compared in constant time. A timestamp further than `toleranceMs` from now is refused, so a
 * captured request cannot be replayed later. Deduplicate on `X-Webhook-ID` (= envelope id) too:
 * delivery is at least once.
 *
 * @throws WebhookVerificationError (answer 401 and do not process the event)
 */
export function verifyWebhook(secret: string, headers: HeaderBag, rawBody: string | Buffer, options: VerifyOptions = {}): WebhookEnvelope {
  const signature = header(headers, 'x-webhook-signature');
  const timestamp = header(headers, 'x-webhook-timestamp');
  if (!signature || !timestamp) {
    throw new WebhookVerificationError('missing-header', 'X-Webhook-Signature and X-Webhook-Timestamp are required');
  }
  if (!/^\d{1,16}$/.test(timestamp))
    throw new WebhookVerificationError('invalid-timestamp', 'X-Webhook-Timestamp is not a Unix time in ms');
  const toleranceMs = options.toleranceMs ?? 5 * 60_000;
  if (Math.abs((options.now ?? Date.now()) - Number(timestamp)) > toleranceMs) {
    throw new WebhookVerificationError('stale-timestamp', `X-Webhook-Timestamp is more than ${toleranceMs} ms away from now`);
  }

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  // Written out rather than calling the sender's signPayload: this file is meant to be copied into
  // receivers' code bases on its own (the unit spec checks that the two agree).
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`, 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new WebhookVerificationError('invalid-signature', 'X-Webhook-Signature does not match');
  }

  try {
    return JSON.parse(body.toString('utf8')) as WebhookEnvelope;
  } catch {
    throw new WebhookVerificationError('invalid-body', 'the body is not JSON');
  }
}
