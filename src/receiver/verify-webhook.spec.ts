import { createHmac } from 'node:crypto';
import { signPayload } from '../dispatch/signature';
import { verifyWebhook, WebhookVerificationError } from './verify-webhook';

const secret = 'whsec_QmFzZTY0dXJsU2VjcmV0Rm9yVGVzdHNPbmx5MTIzNDU2';
const body = '{"id":"evt_1","type":"order.created","timestamp":"2026-11-22T10:00:00.000Z","data":{"id":"o1"}}';
const now = 1_795_000_000_000;

function headersAt(timestamp: number, signature?: string): Record<string, string> {
  const ts = String(timestamp);
  return {
    'x-webhook-timestamp': ts,
    'x-webhook-signature': signature ?? signPayload(secret, ts, body),
    'x-webhook-id': 'evt_1',
  };
}

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  return 'accepted';
}

describe('verifyWebhook', () => {
  it('accepts a delivery signed with the whole whsec_ secret over "<timestamp>.<body>" and returns the envelope', () => {
    const manual = `sha256=${createHmac('sha256', secret).update(`${now}.${body}`).digest('hex')}`;
    expect(signPayload(secret, String(now), body)).toBe(manual);
    expect(verifyWebhook(secret, headersAt(now, manual), body, { now })).toMatchObject({ id: 'evt_1', type: 'order.created' });
  });

  it('accepts the raw body as a Buffer and headers as a fetch Headers object', () => {
    expect(verifyWebhook(secret, new Headers(headersAt(now)), Buffer.from(body), { now }).id).toBe('evt_1');
  });

  it('refuses a body changed by a single byte', () => {
    expect(failure(() => verifyWebhook(secret, headersAt(now), body.replace('o1', 'o2'), { now }))).toBe('invalid-signature');
  });

  it('refuses a signature made with another secret, or without the whsec_ prefix', () => {
    const other = signPayload('whsec_other', String(now), body);
    expect(failure(() => verifyWebhook(secret, headersAt(now, other), body, { now }))).toBe('invalid-signature');
    const unprefixed = signPayload(secret.slice('whsec_'.length), String(now), body);
    expect(failure(() => verifyWebhook(secret, headersAt(now, unprefixed), body, { now }))).toBe('invalid-signature');
  });

  it('refuses a signature of another length without throwing from the comparison', () => {
    expect(failure(() => verifyWebhook(secret, headersAt(now, 'sha256=abc'), body, { now }))).toBe('invalid-signature');
  });

  it('refuses a replay outside the tolerance, either way, and accepts one inside it', () => {
    expect(failure(() => verifyWebhook(secret, headersAt(now - 6 * 60_000), body, { now }))).toBe('stale-timestamp');
    expect(failure(() => verifyWebhook(secret, headersAt(now + 6 * 60_000), body, { now }))).toBe('stale-timestamp');
    expect(failure(() => verifyWebhook(secret, headersAt(now - 1_000), body, { now, toleranceMs: 500 }))).toBe('stale-timestamp');
    expect(failure(() => verifyWebhook(secret, headersAt(now - 60_000), body, { now }))).toBe('accepted');
  });

  it('refuses missing headers and a non-numeric timestamp', () => {
    expect(failure(() => verifyWebhook(secret, {}, body, { now }))).toBe('missing-header');
    expect(failure(() => verifyWebhook(secret, { ...headersAt(now), 'x-webhook-timestamp': 'yesterday' }, body, { now }))).toBe(
      'invalid-timestamp',
    );
  });
});
