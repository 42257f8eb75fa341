import { SecretCache, UnreadableSecretError } from './secret-cache';

describe('SecretCache', () => {
  const decrypt = jest.fn((sealed: string, webhookId: string) => `whsec_${Buffer.from(`${sealed}-${webhookId}`).toString('base64')}`);
  const text = (sealed: string, webhookId: string) => `whsec_${Buffer.from(`${sealed}-${webhookId}`).toString('base64')}`;

  beforeEach(() => decrypt.mockClear());

  it('decrypts an endpoint’s secret once', () => {
    const cache = new SecretCache({ decrypt });
    expect(cache.secretOf('wh_1', 'sealed-1').text).toBe(text('sealed-1', 'wh_1'));
    expect(cache.secretOf('wh_1', 'sealed-1')).toEqual({ text: text('sealed-1', 'wh_1'), key: Buffer.from('sealed-1-wh_1') });
    expect(decrypt).toHaveBeenCalledTimes(1);
  });

  it('decrypts again when the sealed secret changed (a rotation)', () => {
    const cache = new SecretCache({ decrypt });
    cache.secretOf('wh_1', 'sealed-1');
    expect(cache.secretOf('wh_1', 'sealed-2').text).toBe(text('sealed-2', 'wh_1'));
    expect(decrypt).toHaveBeenCalledTimes(2);
  });

  it('keeps the secret before a rotation beside the current one, both bound to the endpoint', () => {
    const cache = new SecretCache({ decrypt });
    cache.secretOf('wh_1', 'new');
    expect(cache.secretOf('wh_1', 'old', 'previous').text).toBe(text('old', 'wh_1'));
    cache.secretOf('wh_1', 'new');
    cache.secretOf('wh_1', 'old', 'previous');
    expect(decrypt).toHaveBeenCalledTimes(2);
    expect(decrypt).toHaveBeenLastCalledWith('old', 'wh_1');
  });

  it('answers a secret its key cannot decrypt with UnreadableSecretError, and tries again next time', () => {
    const failing = jest.fn(() => {
      throw new Error('Unsupported state or unable to authenticate data');
    });
    const cache = new SecretCache({ decrypt: failing });
    expect(() => cache.secretOf('wh_1', 'sealed-1')).toThrow(UnreadableSecretError);
    expect(() => cache.secretOf('wh_1', 'sealed-1')).toThrow(/SECRET_ENCRYPTION_KEY/);
    expect(failing).toHaveBeenCalledTimes(2);
  });

  it('stays within its capacity', () => {
    const cache = new SecretCache({ decrypt }, 2);
    cache.secretOf('wh_1', 's');
    cache.secretOf('wh_2', 's');
    cache.secretOf('wh_3', 's');
    cache.secretOf('wh_1', 's');
    expect(decrypt).toHaveBeenCalledTimes(4);
  });

  it('lets the least recently used secret go when full, and keeps the others', () => {
    const cache = new SecretCache({ decrypt }, 2);
    cache.secretOf('wh_1', 's');
    cache.secretOf('wh_2', 's');
    cache.secretOf('wh_1', 's');
    cache.secretOf('wh_3', 's');
    cache.secretOf('wh_1', 's');
    cache.secretOf('wh_3', 's');
    expect(decrypt).toHaveBeenCalledTimes(3);
    cache.secretOf('wh_2', 's');
    expect(decrypt).toHaveBeenCalledTimes(4);
  });
});
