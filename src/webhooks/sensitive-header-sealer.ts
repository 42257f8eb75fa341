import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { SettingsRepository } from '../database/settings.repository';
import { SENSITIVE_HEADERS_TO_SEAL } from '../database/migrations/1796100000000-SensitiveHeaders';
import { isSensitiveHeader } from './endpoint-headers';
import { SecretCipher } from './secret-cipher';
import { headersToSend, sealHeaders, type StoredHeaders } from './sensitive-headers';
import { WebhookRepository } from './webhook.repository';

/**
 * Seals the sensitive header values that endpoints stored in clear before they were sealed, once,
 * when the migration that added the sealed column asked for it: at start, before this process
 * serves or delivers. Several processes starting together may each seal a row; the first write
 * wins and the others find the row changed. A row whose signing secret this process's key does not
 * open is left for a start with the right key.
 */
@Injectable()
export class SensitiveHeaderSealer implements OnModuleInit {
  private readonly logger = new Logger(SensitiveHeaderSealer.name);

  constructor(
    private readonly settings: SettingsRepository,
    private readonly webhooks: WebhookRepository,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!(await this.settings.has(SENSITIVE_HEADERS_TO_SEAL))) return;
    let sealed = 0;
    let skipped = 0;
    let afterId = '';
    for (;;) {
      const page = await this.webhooks.pageWithHeaders(afterId);
      for (const row of page) {
        // Sealed with a key that cannot open the row's own signing secret, its values would be lost.
        if (!this.opens(row.secretSealed, row.id)) skipped++;
        else {
          const next = this.sealed(row.id, row);
          if (next && (await this.webhooks.replaceStoredHeaders(row.id, row, next))) sealed++;
        }
      }
      if (page.length === 0) break;
      afterId = page[page.length - 1].id;
    }
    if (sealed > 0) this.logger.log(`sealed the sensitive header values of ${sealed} endpoint(s)`);
    if (skipped > 0) {
      this.logger.warn(
        `left the header values of ${skipped} endpoint(s) as they were: SECRET_ENCRYPTION_KEY does not open their signing secrets`,
      );
      return;
    }
    await this.settings.delete(SENSITIVE_HEADERS_TO_SEAL);
  }

  private opens(secretSealed: string, webhookId: string): boolean {
    try {
      this.cipher.decrypt(secretSealed, webhookId);
      return true;
    } catch {
      return false;
    }
  }

  /** The row with its sensitive values sealed, or undefined when none is in clear. */
  private sealed(webhookId: string, stored: StoredHeaders): StoredHeaders | undefined {
    const inClear = Object.entries(stored.headers).some(([name, value]) => value !== null && isSensitiveHeader(name));
    if (!inClear) return undefined;
    return sealHeaders(this.cipher, webhookId, headersToSend(this.cipher, webhookId, stored));
  }
}
