import {
  csrfTokenFor,
  generateCookieSecret,
  generatePortalCode,
  generatePortalToken,
  hashPortalSecret,
  sameSecret,
} from './portal-secrets';

describe('portal secrets', () => {
  it('makes a token, a code and a cookie value of 32 random bytes each, never the same twice', () => {
    expect(generatePortalToken()).toMatch(/^hlp_[A-Za-z0-9_-]{43}$/);
    expect(generatePortalCode()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateCookieSecret()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(Array.from({ length: 50 }, generatePortalToken)).size).toBe(50);
  });

  it('hashes with SHA-256 in hex', () => {
    expect(hashPortalSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('derives one CSRF token per cookie value, which tells nothing of the cookie', () => {
    const cookie = generateCookieSecret();
    expect(csrfTokenFor(cookie)).toBe(csrfTokenFor(cookie));
    expect(csrfTokenFor(cookie)).not.toBe(csrfTokenFor(generateCookieSecret()));
    expect(csrfTokenFor(cookie)).not.toContain(cookie);
  });

  it('compares secrets whole, whatever their lengths', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abd', 'abc')).toBe(false);
    expect(sameSecret('ab', 'abc')).toBe(false);
    expect(sameSecret('', 'abc')).toBe(false);
  });
});
