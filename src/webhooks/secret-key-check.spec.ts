import { randomBytes } from 'node:crypto';
import { SecretCipher } from './secret-cipher';
import { KEY_CHECK_SETTING, SecretEncryptionKeyMismatch, SECRETS_SAMPLED, verifySecretEncryptionKey } from './secret-key-check';

/** The settings table in memory: first writer wins, as in PostgreSQL. */
function memorySettings(initial: Record<string, string> = {}) {
  const values = new Map(Object.entries(initial));
  return {
    values,
    get: async (key: string) => values.get(key),
    getOrCreate: async (key: string, candidate: string) => {
      if (!values.has(key)) values.set(key, candidate);
      return values.get(key)!;
    },
  };
}

const keyA = new SecretCipher(randomBytes(32));
const keyB = new SecretCipher(randomBytes(32));
const none = async () => [];

describe('verifySecretEncryptionKey', () => {
  it('stores a check value on a fresh database and accepts the same key on the next start', async () => {
    const settings = memorySettings();
    await verifySecretEncryptionKey(keyA, settings, none);
    expect(settings.values.get(KEY_CHECK_SETTING)).toMatch(/^v1\./);
    await expect(verifySecretEncryptionKey(keyA, settings, none)).resolves.toBeUndefined();
  });

  it('refuses another key in one line naming SECRET_ENCRYPTION_KEY, and changes nothing', async () => {
    const settings = memorySettings();
    await verifySecretEncryptionKey(keyA, settings, none);
    const stored = settings.values.get(KEY_CHECK_SETTING);
    const refusal = await verifySecretEncryptionKey(keyB, settings, none).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SecretEncryptionKeyMismatch);
    expect((refusal as Error).message).toMatch(/^SECRET_ENCRYPTION_KEY is not the key this database was written with/);
    expect((refusal as Error).message).not.toContain('\n');
    expect(settings.values.get(KEY_CHECK_SETTING)).toBe(stored);
  });

  it('checks a database from before the check value against its signing secrets', async () => {
    const secrets = async (limit: number) =>
      ['wh_1', 'wh_2'].slice(0, limit).map((id) => ({ id, sealed: keyA.encrypt(`whsec_${id}`, id) }));
    const written = memorySettings();
    await verifySecretEncryptionKey(keyA, written, secrets);
    expect(written.values.has(KEY_CHECK_SETTING)).toBe(true);

    const refused = memorySettings();
    await expect(verifySecretEncryptionKey(keyB, refused, secrets)).rejects.toBeInstanceOf(SecretEncryptionKeyMismatch);
    expect(refused.values.size).toBe(0);
  });

  it('accepts a key that opens any one of the sampled secrets (one row copied from elsewhere does not stop a start)', async () => {
    const asked: number[] = [];
    const secrets = async (limit: number) => {
      asked.push(limit);
      return [
        { id: 'wh_1', sealed: keyB.encrypt('whsec_copied', 'wh_1') },
        { id: 'wh_2', sealed: keyA.encrypt('whsec_own', 'wh_2') },
      ];
    };
    await expect(verifySecretEncryptionKey(keyA, memorySettings(), secrets)).resolves.toBeUndefined();
    expect(asked).toEqual([SECRETS_SAMPLED]);
  });

  it('does not look at secrets once a check value is stored', async () => {
    const settings = memorySettings();
    await verifySecretEncryptionKey(keyA, settings, none);
    const secrets = jest.fn(none);
    await verifySecretEncryptionKey(keyA, settings, secrets);
    expect(secrets).not.toHaveBeenCalled();
  });

  it('refuses a process that lost the race to store the check value to a process with another key', async () => {
    const settings = memorySettings();
    const raced = { ...settings, get: async () => undefined };
    await verifySecretEncryptionKey(keyB, settings, none);
    await expect(verifySecretEncryptionKey(keyA, raced, none)).rejects.toBeInstanceOf(SecretEncryptionKeyMismatch);
  });

  it('does not take an endpoint’s ciphertext for the check value', async () => {
    const settings = memorySettings({ [KEY_CHECK_SETTING]: keyA.encrypt('hookline secret encryption key check', 'wh_1') });
    await expect(verifySecretEncryptionKey(keyA, settings, none)).rejects.toBeInstanceOf(SecretEncryptionKeyMismatch);
  });
});
