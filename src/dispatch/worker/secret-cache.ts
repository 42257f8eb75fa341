import { LRUCache } from 'lru-cache';
import type { SecretCipher } from '../../webhooks/secret-cipher';
import { ENDPOINT_CACHE_ENTRIES } from '../sending/endpoint-cache-size';
import { signingSecret, type SigningSecret } from '../sending/signature';

/**
 * The attempt error of a delivery whose endpoint's signing secret does not decrypt with this
 * process's key: nothing is sent, and the delivery fails by its schedule (docs/reliability.md).
 */
export const UNREADABLE_SECRET_ERROR =
  "not sent: the endpoint's signing secret cannot be decrypted with the configured SECRET_ENCRYPTION_KEY " +
  '(it was encrypted with another key); rotate the secret, or run with the key it was written with';

/** An endpoint's sealed signing secret that this process's key does not open. */
export class UnreadableSecretError extends Error {
  override readonly name = 'UnreadableSecretError';

  constructor(readonly webhookId: string) {
    super(UNREADABLE_SECRET_ERROR);
  }
}

/**
 * Decrypted signing secrets by endpoint, so that an endpoint's secret is decrypted (and its key
 * decoded) once, not on every attempt. An entry is used only while the sealed value it came from
 * is the current one, so a rotated secret is picked up by the next claim. The secret before a
 * rotation has its own entry while its overlap lasts.
 */
export class SecretCache {
  private readonly secrets: LRUCache<string, { sealed: string; secret: SigningSecret }>;

  constructor(
    private readonly cipher: Pick<SecretCipher, 'decrypt'>,
    capacity = ENDPOINT_CACHE_ENTRIES,
  ) {
    this.secrets = new LRUCache({ max: capacity });
  }

  secretOf(webhookId: string, sealed: string, which: 'current' | 'previous' = 'current'): SigningSecret {
    const key = which === 'current' ? webhookId : `${webhookId} previous`;
    const cached = this.secrets.get(key);
    if (cached && cached.sealed === sealed) return cached.secret;
    // Both are sealed bound to the endpoint's id: a rotation moves the sealed value as it is.
    const secret = signingSecret(this.decrypt(sealed, webhookId));
    // Bounded: the least recently used go first, so deleted endpoints' secrets do not stay for good.
    this.secrets.set(key, { sealed, secret });
    return secret;
  }

  private decrypt(sealed: string, webhookId: string): string {
    try {
      return this.cipher.decrypt(sealed, webhookId);
    } catch {
      throw new UnreadableSecretError(webhookId);
    }
  }
}
