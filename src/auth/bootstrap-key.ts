import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { PgNotifier } from '../database/pg-notifier';
import { API_KEY_REVOKED_CHANNEL, ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeyRepository } from './api-key.repository';
import { generateApiKeyText, hashApiKey } from './api-key-text';
import { SCOPES } from './scopes';

export const DEFAULT_STORE_ID = 'st_default';
export const BOOTSTRAP_KEY_ID = 'key_bootstrap';
const GENERATED_NAME = 'bootstrap (generated)';

/**
 * The first key of store st_default, holding every scope, always under one fixed id: either
 * ADMIN_API_KEY, which replaces (and so revokes) whatever bootstrap key was there before, or, when
 * it is unset and no key exists at all, a generated one whose text main.ts shows once
 * (docs/operations.md#the-administrator-key).
 */
@Injectable()
export class BootstrapKey implements OnApplicationBootstrap {
  private readonly logger = new Logger('BootstrapKey');

  constructor(
    private readonly config: AppConfig,
    private readonly keys: ApiKeyRepository,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly notifier: PgNotifier,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.adminApiKey) return;
    const revoked = await this.keys.replaceBootstrap(
      {
        id: BOOTSTRAP_KEY_ID,
        storeId: DEFAULT_STORE_ID,
        name: 'bootstrap (ADMIN_API_KEY)',
        scopes: [...SCOPES],
        keyHash: hashApiKey(this.config.adminApiKey),
      },
      GENERATED_NAME,
    );
    for (const id of revoked) {
      // Processes already running may hold the old key in their cache.
      this.authenticator.evict(id);
      await this.notifier.notify(API_KEY_REVOKED_CHANNEL, id);
    }
    if (revoked.length > 0) this.logger.warn('ADMIN_API_KEY replaced the previous bootstrap key, which no longer works');
  }

  /**
   * Without ADMIN_API_KEY and with no key in the database, generates the bootstrap key and answers
   * its text, which exists nowhere else: the caller must show it. Called once the server listens,
   * so that a start that fails earlier (a port in use) does not leave a key nobody ever saw.
   */
  async generateIfNone(): Promise<string | undefined> {
    if (this.config.adminApiKey) return undefined;
    const text = generateApiKeyText();
    const inserted = await this.keys.insertIfNone({
      id: BOOTSTRAP_KEY_ID,
      storeId: DEFAULT_STORE_ID,
      name: GENERATED_NAME,
      scopes: [...SCOPES],
      keyHash: hashApiKey(text),
    });
    if (!inserted) return undefined;
    this.logger.warn('no API key existed: generated the bootstrap key (shown once on stdout, never logged)');
    return text;
  }
}
