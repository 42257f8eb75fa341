import { portalCookie, portalCookiePolicy } from './portal-cookie';

describe('portal cookie', () => {
  it('is Secure outside development, and Strict unless other sites may frame the dashboard', () => {
    expect(portalCookiePolicy({ nodeEnv: 'production', portalFrameAncestors: [] })).toEqual({ secure: true, crossSite: false });
    expect(portalCookiePolicy({ nodeEnv: 'test', portalFrameAncestors: [] })).toEqual({ secure: true, crossSite: false });
    expect(portalCookiePolicy({ nodeEnv: 'development', portalFrameAncestors: [] })).toEqual({ secure: false, crossSite: false });
    // SameSite=None is accepted by browsers only with Secure, in development too.
    expect(portalCookiePolicy({ nodeEnv: 'development', portalFrameAncestors: ['https://admin.example.com'] })).toEqual({
      secure: true,
      crossSite: true,
    });
  });

  it("is named after its session, HttpOnly, for the API's path, and lasts as long as the session", () => {
    expect(portalCookie('ps_1', 's3cret', 3599.7, { secure: true, crossSite: false })).toBe(
      'hookline_portal_ps_1=s3cret; Path=/api/v1/external; Max-Age=3599; HttpOnly; Secure; SameSite=Strict',
    );
    expect(portalCookie('ps_1', 's3cret', 60, { secure: false, crossSite: false })).toBe(
      'hookline_portal_ps_1=s3cret; Path=/api/v1/external; Max-Age=60; HttpOnly; SameSite=Strict',
    );
    expect(portalCookie('ps_1', 's3cret', -5, { secure: true, crossSite: true })).toBe(
      'hookline_portal_ps_1=s3cret; Path=/api/v1/external; Max-Age=0; HttpOnly; Secure; SameSite=None; Partitioned',
    );
  });
});
