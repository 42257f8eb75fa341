import { isSensitiveHeader } from './endpoint-headers';
import type { SecretCipher } from './secret-cipher';

/** An endpoint's headers as stored: sensitive ones by name with a null value, their values sealed apart. */
export interface StoredHeaders {
  headers: Record<string, string | null>;
  /** The sensitive values, `{name: value}` as JSON, sealed by SecretCipher; null when there are none. */
  sealed: string | null;
}

/** An endpoint's headers as the API answers them. */
export interface ShownHeaders {
  /** Every name; a sensitive one's value is null. */
  headers: Record<string, string | null>;
  /** The names whose values are kept secret, sorted. */
  sensitiveHeaders: string[];
}

/**
 * Sensitive values are sealed bound to the endpoint and to this purpose, so that neither another
 * row's sealed headers nor the endpoint's own sealed signing secret opens in their place.
 */
function boundTo(webhookId: string): string {
  return `${webhookId} headers`;
}

/**
 * Headers as the API shows them: every sensitive value null, whatever is stored (a row written
 * before sensitive values were sealed still shows none).
 */
export function showHeaders(stored: Readonly<Record<string, string | null>>): ShownHeaders {
  const headers: Record<string, string | null> = {};
  const sensitiveHeaders: string[] = [];
  for (const [name, value] of Object.entries(stored)) {
    const sensitive = isSensitiveHeader(name);
    headers[name] = sensitive ? null : value;
    if (sensitive) sensitiveHeaders.push(name);
  }
  return { headers, sensitiveHeaders: sensitiveHeaders.sort() };
}

/** Seals the sensitive values of `headers` (all given) for the endpoint `webhookId`. */
export function sealHeaders(
  cipher: Pick<SecretCipher, 'encrypt'>,
  webhookId: string,
  headers: Readonly<Record<string, string>>,
): StoredHeaders {
  const stored: Record<string, string | null> = {};
  const secret: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (isSensitiveHeader(name)) {
      stored[name] = null;
      secret[name] = value;
    } else stored[name] = value;
  }
  const sealed = Object.keys(secret).length > 0 ? cipher.encrypt(JSON.stringify(secret), boundTo(webhookId)) : null;
  return { headers: stored, sealed };
}

/** The sensitive values of an endpoint by name, opened (throws when the key cannot open them). */
export function openSensitiveValues(
  cipher: Pick<SecretCipher, 'decrypt'>,
  webhookId: string,
  sealed: string | null,
): Record<string, string> {
  return sealed ? (JSON.parse(cipher.decrypt(sealed, boundTo(webhookId))) as Record<string, string>) : {};
}

/**
 * The headers to send, every value in clear. A value stored in clear under a sensitive name (a
 * row not sealed yet) is sent as it is.
 */
export function headersToSend(cipher: Pick<SecretCipher, 'decrypt'>, webhookId: string, stored: StoredHeaders): Record<string, string> {
  const values = openSensitiveValues(cipher, webhookId, stored.sealed);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored.headers)) {
    const sent = value ?? values[name];
    if (sent !== undefined) headers[name] = sent;
  }
  return headers;
}

/**
 * The headers a PUT gives, with each sensitive one given as null replaced by its stored value
 * (`current`, every value in clear; names match in any case). `missing` names those null with
 * no stored value to keep.
 */
export function keepStoredValues(
  given: Readonly<Record<string, string | null>>,
  current: Readonly<Record<string, string>>,
): { headers: Record<string, string>; missing: string[] } {
  const byLowerName = new Map(Object.entries(current).map(([name, value]) => [name.toLowerCase(), value]));
  const headers: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, value] of Object.entries(given)) {
    const kept = value ?? byLowerName.get(name.toLowerCase());
    if (kept === undefined) missing.push(name);
    else headers[name] = kept;
  }
  return { headers, missing };
}
