import { SecretCache } from './secret-cache';

describe('SecretCache', () => {
  const decrypt = jest.fn((sealed: string, webhookId: string) => `secret-of-${sealed}-${webhookId}`);

  beforeEach(() => decrypt.mockClear());

  it('decrypts an endpoint’s secret once', () => {
    const cache = new SecretCache({ decrypt });
    expect(cache.secretOf('wh_1', 'sealed-1')).toBe('secret-of-sealed-1-wh_1');
    expect(cache.secretOf('wh_1', 'sealed-1')).toBe('secret-of-sealed-1-wh_1');
    expect(decrypt).toHaveBeenCalledTimes(1);
  });

  it('decrypts again when the sealed secret changed (a rotation)', () => {
    const cache = new SecretCache({ decrypt });
    cache.secretOf('wh_1', 'sealed-1');
    expect(cache.secretOf('wh_1', 'sealed-2')).toBe('secret-of-sealed-2-wh_1');
    expect(decrypt).toHaveBeenCalledTimes(2);
  });

  it('stays within its capacity', () => {
    const cache = new SecretCache({ decrypt }, 2);
    cache.secretOf('wh_1', 's');
    cache.secretOf('wh_2', 's');
    cache.secretOf('wh_3', 's');
    cache.secretOf('wh_1', 's');
    expect(decrypt).toHaveBeenCalledTimes(4);
  });
});
