import { randomBytes } from 'node:crypto';
import type { SettingsRepository } from '../database/settings.repository';
import { SecretCipher } from './secret-cipher';
import { SensitiveHeaderSealer } from './sensitive-header-sealer';
import { headersToSend, sealHeaders, type StoredHeaders } from './sensitive-headers';
import type { WebhookRepository } from './webhook.repository';

describe('SensitiveHeaderSealer', () => {
  const cipher = new SecretCipher(randomBytes(32));
  let flag: boolean;
  let rows: Map<string, StoredHeaders & { secretSealed: string }>;
  let sealer: SensitiveHeaderSealer;

  function row(id: string, headers: Record<string, string | null>, key = cipher) {
    rows.set(id, { headers, sealed: null, secretSealed: key.encrypt('whsec_x', id) });
  }

  beforeEach(() => {
    flag = true;
    rows = new Map();
    const settings = {
      has: async () => flag,
      delete: async () => {
        flag = false;
      },
    } as unknown as SettingsRepository;
    // Pages of two, as the repository reads them: by id, after the last one.
    const repository = {
      pageWithHeaders: async (afterId: string) =>
        [...rows.entries()]
          .filter(([id]) => id > afterId)
          .sort(([a], [b]) => a.localeCompare(b))
          .slice(0, 2)
          .map(([id, stored]) => ({ id, revision: '', ...stored })),
      replaceStoredHeaders: async (id: string, expected: StoredHeaders, next: StoredHeaders) => {
        const current = rows.get(id)!;
        if (JSON.stringify(current.headers) !== JSON.stringify(expected.headers)) return false;
        rows.set(id, { ...current, ...next });
        return true;
      },
    } as unknown as WebhookRepository;
    sealer = new SensitiveHeaderSealer(settings, repository, cipher);
  });

  it('seals every value stored in clear under a sensitive name, keeps what it sends, and is then done', async () => {
    row('wh_1', { Authorization: 'Bearer 1', 'X-Store': 'a' });
    row('wh_2', { 'X-Store': 'b' });
    row('wh_3', { Cookie: 'c=1' });
    await sealer.onModuleInit();
    expect(rows.get('wh_1')!.headers).toEqual({ Authorization: null, 'X-Store': 'a' });
    expect(headersToSend(cipher, 'wh_1', rows.get('wh_1')!)).toEqual({ Authorization: 'Bearer 1', 'X-Store': 'a' });
    expect(rows.get('wh_2')).toMatchObject({ headers: { 'X-Store': 'b' }, sealed: null });
    expect(headersToSend(cipher, 'wh_3', rows.get('wh_3')!)).toEqual({ Cookie: 'c=1' });
    expect(flag).toBe(false);
  });

  it('keeps values already sealed beside the ones it seals', async () => {
    const stored = sealHeaders(cipher, 'wh_1', { 'X-Api-Key': 'k' });
    rows.set('wh_1', {
      headers: { ...stored.headers, Authorization: 'Bearer 1' },
      sealed: stored.sealed,
      secretSealed: cipher.encrypt('s', 'wh_1'),
    });
    await sealer.onModuleInit();
    expect(headersToSend(cipher, 'wh_1', rows.get('wh_1')!)).toEqual({ 'X-Api-Key': 'k', Authorization: 'Bearer 1' });
    expect(Object.values(rows.get('wh_1')!.headers)).toEqual([null, null]);
  });

  it('leaves a row whose signing secret its key does not open, and asks again at the next start', async () => {
    row('wh_1', { Authorization: 'Bearer 1' }, new SecretCipher(randomBytes(32)));
    await sealer.onModuleInit();
    expect(rows.get('wh_1')!.headers).toEqual({ Authorization: 'Bearer 1' });
    expect(flag).toBe(true);
  });

  it('reads nothing unless the migration asked for it', async () => {
    flag = false;
    row('wh_1', { Authorization: 'Bearer 1' });
    await sealer.onModuleInit();
    expect(rows.get('wh_1')!.headers).toEqual({ Authorization: 'Bearer 1' });
  });
});
