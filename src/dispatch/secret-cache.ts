import type { SecretCipher } from '../webhooks/secret-cipher';

const MAX_CACHED_SECRETS = 10_000;

/**
 * Decrypted signing secrets by endpoint, so that an endpoint's secret is decrypted once, not on
 * every attempt. An entry is used only while the sealed value it came from is the current one, so
 * a rotated secret is picked up by the next claim.
 */
export class SecretCache {
  private readonly secrets = new Map<string, { sealed: string; secret: string }>();

  constructor(
    private readonly cipher: Pick<SecretCipher, 'decrypt'>,
    private readonly capacity = MAX_CACHED_SECRETS,
  ) {}

  secretOf(webhookId: string, sealed: string): string {
    const cached = this.secrets.get(webhookId);
    if (cached && cached.sealed === sealed) return cached.secret;
    const secret = this.cipher.decrypt(sealed, webhookId);
    // Bounded like the API-key cache: deleted endpoints' secrets do not stay in memory for good.
    if (this.secrets.size >= this.capacity) this.secrets.clear();
    this.secrets.set(webhookId, { sealed, secret });
    return secret;
  }
}
