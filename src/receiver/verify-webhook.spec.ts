import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signatureHeaders, signingSecret, signPayload } from '../dispatch/sending/signature';
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

  describe('Standard Webhooks headers', () => {
    const current = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const previous = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
    const both = { seed: true, standard: true };
    const sign = (secrets: { current: string; previous?: string }, sets = both) =>
      signatureHeaders(
        sets,
        'evt_1',
        body,
        signingSecret(secrets.current),
        secrets.previous ? signingSecret(secrets.previous) : undefined,
        now,
      );

    it('verifies webhook-signature alone, as the standardwebhooks library does', () => {
      const headers = sign({ current }, { seed: false, standard: true });
      expect(verifyWebhook(current, headers, body, { now }).id).toBe('evt_1');
      // The reference library agrees on the same headers (it checks the time against the real clock).
      const live = signatureHeaders({ seed: false, standard: true }, 'evt_1', body, signingSecret(current), undefined, Date.now());
      expect(new Webhook(current).verify(body, live)).toMatchObject({ id: 'evt_1' });
      expect(failure(() => verifyWebhook(previous, headers, body, { now }))).toBe('invalid-signature');
    });

    it('refuses a stale webhook-timestamp (seconds) and a missing webhook-id', () => {
      const headers = sign({ current }, { seed: false, standard: true });
      expect(failure(() => verifyWebhook(current, headers, body, { now: now + 6 * 60_000 }))).toBe('stale-timestamp');
      const { 'webhook-id': _id, ...withoutId } = headers;
      expect(failure(() => verifyWebhook(current, withoutId, body, { now }))).toBe('missing-header');
    });

    it('during a rotation: the old secret verifies both sets, the new one the standard set, both secrets either', () => {
      const headers = sign({ current, previous });
      const seedOnly = {
        'x-webhook-id': headers['x-webhook-id'],
        'x-webhook-timestamp': headers['x-webhook-timestamp'],
        'x-webhook-signature': headers['x-webhook-signature'],
      };
      const standardOnly = {
        'webhook-id': headers['webhook-id'],
        'webhook-timestamp': headers['webhook-timestamp'],
        'webhook-signature': headers['webhook-signature'],
      };
      expect(failure(() => verifyWebhook(previous, seedOnly, body, { now }))).toBe('accepted');
      expect(failure(() => verifyWebhook(previous, standardOnly, body, { now }))).toBe('accepted');
      expect(failure(() => verifyWebhook(current, standardOnly, body, { now }))).toBe('accepted');
      expect(failure(() => verifyWebhook(current, seedOnly, body, { now }))).toBe('invalid-signature');
      expect(failure(() => verifyWebhook([current, previous], seedOnly, body, { now }))).toBe('accepted');
      expect(failure(() => verifyWebhook([current, previous], standardOnly, body, { now }))).toBe('accepted');
      expect(failure(() => verifyWebhook(current, headers, body, { now }))).toBe('accepted');
    });

    it('still verifies a secret made before the standard base64 form (base64url), with either set', () => {
      const headers = sign({ current: secret });
      expect(failure(() => verifyWebhook(secret, headers, body, { now }))).toBe('accepted');
      const { 'x-webhook-signature': _s, ...standardOnly } = headers;
      expect(failure(() => verifyWebhook(secret, standardOnly, body, { now }))).toBe('accepted');
    });

    it('refuses a delivery with neither signature header', () => {
      expect(failure(() => verifyWebhook(current, { 'webhook-id': 'evt_1' }, body, { now }))).toBe('missing-header');
    });
  });
});
