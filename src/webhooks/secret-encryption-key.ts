import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import type { SettingsRepository } from '../database/settings.repository';

/**
 * SECRET_ENCRYPTION_KEY, or, outside production when it is unset, a key generated once and kept
 * where every process finds it: in DATA_DIR beside the embedded database (so a copy of the
 * database alone does not reveal the secrets), or in the database when it is a shared server.
 */
export async function loadSecretEncryptionKey(config: AppConfig, settings: SettingsRepository): Promise<Buffer> {
  if (config.secretEncryptionKey) return config.secretEncryptionKey;
  const logger = new Logger('SecretEncryptionKey');
  if (config.embeddedDatabase) {
    const file = join(config.dataDir, 'secret-encryption.key');
    const existing = await readFile(file, 'utf8').catch(() => undefined);
    if (existing) return Buffer.from(existing.trim(), 'base64');
    const key = randomBytes(32);
    await mkdir(config.dataDir, { recursive: true });
    await writeFile(file, key.toString('base64'), { mode: 0o600, flag: 'wx' }).catch(async () => {
      // Lost a race with another start: use the winner's key.
      return undefined;
    });
    logger.warn(`SECRET_ENCRYPTION_KEY is unset: using a generated key kept in ${file}`);
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  }
  logger.warn('SECRET_ENCRYPTION_KEY is unset: using a generated key kept in the database (set it in production)');
  const stored = await settings.getOrCreate('secret_encryption_key', randomBytes(32).toString('base64'));
  return Buffer.from(stored, 'base64');
}
