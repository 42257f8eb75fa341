import { createHmac } from 'node:crypto';

/**
 * `sha256=` + lowercase hex HMAC-SHA256 over `<timestamp>.<body>`, keyed with the whole secret
 * string, `whsec_` included, as UTF-8.
 */
export function signPayload(secret: string, timestamp: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}
