import { dashboardCsp, dashboardHeaders } from './dashboard.controller';

describe('dashboard headers', () => {
  it('refuse every frame by default, in the CSP and in X-Frame-Options', () => {
    expect(dashboardCsp([])).toContain("frame-ancestors 'none'");
    expect(dashboardHeaders([])['X-Frame-Options']).toBe('DENY');
  });

  it('let the origins of PORTAL_FRAME_ANCESTORS frame the page, and drop X-Frame-Options, which cannot name them', () => {
    const headers = dashboardHeaders(['https://admin.example.com', 'https://admin.example.org']);
    expect(headers['Content-Security-Policy']).toContain('frame-ancestors https://admin.example.com https://admin.example.org;');
    expect(headers).not.toHaveProperty('X-Frame-Options');
  });

  it('load scripts, styles and requests from the page’s own origin alone, and images from https:// too (a portal logo)', () => {
    const csp = dashboardCsp([]);
    for (const directive of ["script-src 'self';", "style-src 'self';", "connect-src 'self';", "img-src 'self' https:;"])
      expect(csp).toContain(directive);
    expect(csp).not.toMatch(/img-src[^;]*(http:|data:|\*)/);
  });
});
