import { cookieValue, credentialOf } from './request-credentials';

const SESSION = 'ps_01jd5v1xkq8w3r0m6m2n4p7s9t';

describe('credentialOf', () => {
  it('takes X-API-Key first, then a Bearer token, then a portal session with its cookie', () => {
    expect(credentialOf({ 'x-api-key': 'hlk_a', authorization: 'Bearer hlp_b' })).toEqual({ kind: 'api-key', key: 'hlk_a' });
    expect(credentialOf({ authorization: 'Bearer hlp_b', 'x-portal-session': SESSION })).toEqual({ kind: 'bearer', token: 'hlp_b' });
    expect(credentialOf({ authorization: 'bearer  hlp_b ' })).toEqual({ kind: 'bearer', token: 'hlp_b' });
    expect(credentialOf({ 'x-portal-session': SESSION, cookie: `other=1; hookline_portal_${SESSION}=s3cret` })).toEqual({
      kind: 'cookie',
      sessionId: SESSION,
      secret: 's3cret',
    });
    expect(credentialOf({})).toEqual({ kind: 'none' });
  });

  it("ignores an Authorization of another scheme (a proxy's Basic) and a cookie without X-Portal-Session", () => {
    expect(credentialOf({ authorization: 'Basic dXNlcjpwYXNz' })).toEqual({ kind: 'none' });
    expect(credentialOf({ cookie: `hookline_portal_${SESSION}=s3cret` })).toEqual({ kind: 'none' });
  });

  it('keeps a session named without its cookie, or named wrongly, as a credential that will fail', () => {
    expect(credentialOf({ 'x-portal-session': SESSION, cookie: 'hookline_portal_ps_other=x' })).toEqual({
      kind: 'cookie',
      sessionId: SESSION,
      secret: undefined,
    });
    expect(credentialOf({ 'x-portal-session': '../etc' })).toEqual({ kind: 'cookie', sessionId: '', secret: undefined });
  });

  it('counts text too long to be a credential as a wrong one', () => {
    expect(credentialOf({ 'x-api-key': 'k'.repeat(513) })).toEqual({ kind: 'api-key', key: '' });
    expect(credentialOf({ authorization: `Bearer ${'t'.repeat(513)}` })).toEqual({ kind: 'bearer', token: '' });
  });
});

describe('cookieValue', () => {
  it('finds a cookie by its exact name among others', () => {
    expect(cookieValue('a=1; b=2;c=3', 'b')).toBe('2');
    expect(cookieValue('a=1; c=3', 'c')).toBe('3');
    expect(cookieValue('ab=1', 'a')).toBeUndefined();
    expect(cookieValue('a=', 'a')).toBeUndefined();
    expect(cookieValue(undefined, 'a')).toBeUndefined();
  });
});
