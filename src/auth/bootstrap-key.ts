import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { newId } from '../common/ids';
import { ApiKeyRepository } from './api-key.repository';
import { generateApiKeyText, hashApiKey } from './api-key-text';
import { SCOPES } from './scopes';

export const DEFAULT_STORE_ID = 'st_default';
export const BOOTSTRAP_KEY_ID = 'key_bootstrap';
const GENERATE_LOCK_KEY = 7_338_249_012;

/**
 * The first key: ADMIN_API_KEY, stored hashed under a fixed id so that changing the
 * variable replaces it; or, when it is unset and no key exists at all, one generated key, stored
 * hashed and printed once on stdout (not through the logs, which must never hold a secret).
 */
@Injectable()
export class BootstrapKey implements OnApplicationBootstrap {
  private readonly logger = new Logger('BootstrapKey');

  constructor(
    private readonly config: AppConfig,
    private readonly keys: ApiKeyRepository,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.adminApiKey) {
      await this.keys.upsertBootstrap(
        BOOTSTRAP_KEY_ID,
        DEFAULT_STORE_ID,
        'bootstrap (ADMIN_API_KEY)',
        [...SCOPES],
        hashApiKey(this.config.adminApiKey),
      );
      return;
    }
    const generated = await this.dataSource.transaction(async (manager) => {
      // Several instances may start together on an empty database: one of them generates.
      await manager.query('SELECT pg_advisory_xact_lock($1)', [GENERATE_LOCK_KEY]);
      const [{ count }] = await manager.query<Array<{ count: number }>>('SELECT count(*)::int AS count FROM api_keys');
      if (count > 0) return undefined;
      const text = generateApiKeyText();
      await manager.query(`INSERT INTO api_keys (id, store_id, name, scopes, key_hash) VALUES ($1, $2, $3, $4, $5)`, [
        newId('key'),
        DEFAULT_STORE_ID,
        'bootstrap (generated)',
        [...SCOPES],
        hashApiKey(text),
      ]);
      return text;
    });
    if (!generated) return;
    this.logger.warn('no API key existed: generated an administrator key (printed once on stdout)');
    process.stdout.write(
      [
        '',
        '==================================================================',
        ` ${this.config.serviceName}: administrator API key for store ${DEFAULT_STORE_ID}`,
        ` (every scope; shown once, store it now):`,
        '',
        `   ${generated}`,
        '',
        ' Use it as the X-API-Key header, in Swagger UI (/docs) or the dashboard.',
        '==================================================================',
        '',
      ].join('\n'),
    );
  }
}
