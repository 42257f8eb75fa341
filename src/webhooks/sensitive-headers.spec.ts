import { randomBytes } from 'node:crypto';
import { SecretCipher } from './secret-cipher';
import { headersToSend, keepStoredValues, openSensitiveValues, sealHeaders, showHeaders } from './sensitive-headers';

describe('sensitive headers', () => {
  const cipher = new SecretCipher(randomBytes(32));
  const given = { Authorization: 'Bearer 9f8e7d', 'X-Store': 'berlin-1', 'X-Api-Key': 'k-123' };

  it('stores sensitive values only sealed, by name with a null value, and sends every value in clear', () => {
    const stored = sealHeaders(cipher, 'wh_1', given);
    expect(stored.headers).toEqual({ Authorization: null, 'X-Store': 'berlin-1', 'X-Api-Key': null });
    expect(stored.sealed).not.toContain('9f8e7d');
    expect(stored.sealed).not.toContain('k-123');
    expect(openSensitiveValues(cipher, 'wh_1', stored.sealed)).toEqual({ Authorization: 'Bearer 9f8e7d', 'X-Api-Key': 'k-123' });
    const sent = headersToSend(cipher, 'wh_1', stored);
    expect(sent).toEqual(given);
    expect(Object.keys(sent)).toEqual(Object.keys(given));
  });

  it('seals nothing when no header is sensitive', () => {
    expect(sealHeaders(cipher, 'wh_1', { 'X-Store': 'a' })).toEqual({ headers: { 'X-Store': 'a' }, sealed: null });
    expect(headersToSend(cipher, 'wh_1', { headers: {}, sealed: null })).toEqual({});
  });

  it("opens only on the endpoint's own row, and not in place of its signing secret", () => {
    const stored = sealHeaders(cipher, 'wh_1', given);
    expect(() => openSensitiveValues(cipher, 'wh_2', stored.sealed)).toThrow();
    expect(() => cipher.decrypt(stored.sealed!, 'wh_1')).toThrow();
    expect(() => openSensitiveValues(new SecretCipher(randomBytes(32)), 'wh_1', stored.sealed)).toThrow();
  });

  it('shows every sensitive value as null and lists the names, whatever is stored', () => {
    expect(showHeaders({ Authorization: 'Bearer in-clear', 'X-Store': 'b', cookie: null })).toEqual({
      headers: { Authorization: null, 'X-Store': 'b', cookie: null },
      sensitiveHeaders: ['Authorization', 'cookie'],
    });
  });

  it('sends a value stored in clear under a sensitive name (a row not sealed yet)', () => {
    expect(headersToSend(cipher, 'wh_1', { headers: { Authorization: 'Bearer old' }, sealed: null })).toEqual({
      Authorization: 'Bearer old',
    });
  });

  it('keeps the stored value of a sensitive header given as null, in any case, and names those with none', () => {
    expect(keepStoredValues({ authorization: null, 'X-Store': 'c' }, { Authorization: 'Bearer 1', 'X-Store': 'b' })).toEqual({
      headers: { authorization: 'Bearer 1', 'X-Store': 'c' },
      missing: [],
    });
    expect(keepStoredValues({ Cookie: null, 'X-Token': 't' }, {})).toEqual({ headers: { 'X-Token': 't' }, missing: ['Cookie'] });
  });
});
