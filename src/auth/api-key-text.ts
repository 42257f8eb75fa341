import { createHash, randomBytes } from 'node:crypto';

/** A new API key's text: `hlk_` and 32 random bytes. Shown once, stored only as its hash. */
export function generateApiKeyText(): string {
  return `hlk_${randomBytes(32).toString('base64url')}`;
}

/**
 * SHA-256 is enough for keys with 256 bits of entropy (no dictionary to attack); a slow password
 * hash would only cost every request time.
 */
export function hashApiKey(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
