import { createHmac } from 'node:crypto';

/** A signing secret as both schemes use it: the text for X-Webhook-Signature, the decoded bytes for webhook-signature. */
export interface SigningSecret {
  /** `whsec_…`, as shown to the integrator. */
  text: string;
  /** The bytes after `whsec_`, base64-decoded (Node's decoder also reads the base64url of older secrets). */
  key: Buffer;
}

export function signingSecret(text: string): SigningSecret {
  return { text, key: Buffer.from(text.startsWith('whsec_') ? text.slice('whsec_'.length) : text, 'base64') };
}

/**
 * X-Webhook-Signature: `sha256=` + lowercase hex HMAC-SHA256 over `<timestamp ms>.<body>`, keyed
 * with the whole secret string, `whsec_` included, as UTF-8.
 */
export function signPayload(secret: string, timestamp: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/**
 * webhook-signature (Standard Webhooks): `v1,` + base64 HMAC-SHA256 over `<id>.<timestamp s>.<body>`
 * keyed with the decoded secret; one entry per secret, space separated (the new one first during
 * a rotation's overlap).
 */
export function signStandard(secrets: readonly SigningSecret[], id: string, timestampSeconds: string, body: string | Buffer): string {
  return secrets
    .map((secret) => `v1,${createHmac('sha256', secret.key).update(`${id}.${timestampSeconds}.`).update(body).digest('base64')}`)
    .join(' ');
}

export interface SignatureSets {
  /** X-Webhook-ID, X-Webhook-Timestamp (ms), X-Webhook-Signature. */
  seed: boolean;
  /** webhook-id, webhook-timestamp (s), webhook-signature. */
  standard: boolean;
}

/**
 * The signature headers of one attempt at `nowMs`. During a rotation's overlap (`previous` set)
 * X-Webhook-Signature keeps the previous secret, so receivers that have not switched still verify,
 * and webhook-signature carries both.
 */
export function signatureHeaders(
  sets: SignatureSets,
  eventId: string,
  body: string,
  current: SigningSecret,
  previous: SigningSecret | undefined,
  nowMs: number,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (sets.seed) {
    const timestamp = String(nowMs);
    headers['x-webhook-id'] = eventId;
    headers['x-webhook-timestamp'] = timestamp;
    headers['x-webhook-signature'] = signPayload((previous ?? current).text, timestamp, body);
  }
  if (sets.standard) {
    const timestamp = String(Math.floor(nowMs / 1000));
    headers['webhook-id'] = eventId;
    headers['webhook-timestamp'] = timestamp;
    headers['webhook-signature'] = signStandard(previous ? [current, previous] : [current], eventId, timestamp, body);
  }
  return headers;
}
