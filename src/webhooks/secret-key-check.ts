import { StartupRefusal } from '../common/startup-refusal';
import type { SecretCipher } from './secret-cipher';

/** The `settings` row that holds a known text sealed with the key the database was written with. */
export const KEY_CHECK_SETTING = 'secret_encryption_key_check';
const CHECK_TEXT = 'hookline secret encryption key check';
/** Bound in like a secret's row id, so that no endpoint's ciphertext can stand in for it. */
const CHECK_BINDING = `settings:${KEY_CHECK_SETTING}`;
/** Secrets tried when a database from before the check value has none yet: one that opens is enough. */
export const SECRETS_SAMPLED = 20;

/** The process's SECRET_ENCRYPTION_KEY is not the one the database's signing secrets were sealed with. */
export class SecretEncryptionKeyMismatch extends StartupRefusal {
  override readonly name = 'SecretEncryptionKeyMismatch';

  constructor() {
    super(
      'SECRET_ENCRYPTION_KEY is not the key this database was written with (its signing secrets do not decrypt with it): ' +
        'start with that key, the same in every process; refusing to start',
    );
  }
}

export interface KeyCheckSettings {
  get(key: string): Promise<string | undefined>;
  getOrCreate(key: string, candidate: string): Promise<string>;
}

/** A few endpoints' sealed signing secrets, each with the id it is bound to. */
export type SecretSample = (limit: number) => Promise<Array<{ id: string; sealed: string }>>;

/**
 * Refuses a key that differs from the one the database was written with, before anything is
 * sealed or opened with it: a wrong key would otherwise fail every delivery and seal new secrets
 * that the right key cannot open. The first start stores a check value sealed with its key; a
 * database written before the check existed is checked against its newest signing secrets.
 * Throws {@link SecretEncryptionKeyMismatch}.
 */
export async function verifySecretEncryptionKey(
  cipher: Pick<SecretCipher, 'encrypt' | 'decrypt'>,
  settings: KeyCheckSettings,
  sampleSecrets: SecretSample,
): Promise<void> {
  let check = await settings.get(KEY_CHECK_SETTING);
  if (check === undefined) {
    const secrets = await sampleSecrets(SECRETS_SAMPLED);
    if (secrets.length > 0 && !secrets.some(({ id, sealed }) => opens(cipher, sealed, id))) throw new SecretEncryptionKeyMismatch();
    // First writer wins: a process started at the same moment with another key is refused below.
    check = await settings.getOrCreate(KEY_CHECK_SETTING, cipher.encrypt(CHECK_TEXT, CHECK_BINDING));
  }
  if (!opens(cipher, check, CHECK_BINDING, CHECK_TEXT)) throw new SecretEncryptionKeyMismatch();
}

function opens(cipher: Pick<SecretCipher, 'decrypt'>, sealed: string, boundTo: string, expected?: string): boolean {
  try {
    const text = cipher.decrypt(sealed, boundTo);
    return expected === undefined || text === expected;
  } catch {
    return false;
  }
}
