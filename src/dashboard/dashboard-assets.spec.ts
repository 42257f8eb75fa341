import { DashboardAssets } from './dashboard-assets';

/** The dashboard has no build step, so these checks stand in for a bundler's. */
describe('dashboard assets', () => {
  const assets = new DashboardAssets();
  const text = (name: string): string => assets.get(name)!.body.toString('utf8');

  it('holds every file the page links to', () => {
    const linked = [...text('index.html').matchAll(/(?:src|href)="\/dashboard\/([^"]+)"/g)].map((match) => match[1]);
    expect(linked).toEqual(expect.arrayContaining(['dashboard.css', 'js/app.js', 'icon.svg']));
    for (const name of linked) expect(assets.names()).toContain(name);
  });

  it('resolves every import of every module to a file it serves', () => {
    for (const name of assets.names().filter((file) => file.endsWith('.js'))) {
      for (const [, specifier] of text(name).matchAll(/^import [^;]*? from '([^']+)';$/gm)) {
        const resolved = new URL(specifier, `http://x/dashboard/${name}`).pathname.replace('/dashboard/', '');
        expect({ module: name, import: specifier, found: assets.names().includes(resolved) }).toEqual({
          module: name,
          import: specifier,
          found: true,
        });
      }
    }
  });

  it('loads nothing from elsewhere and builds no HTML from strings', () => {
    for (const name of assets.names()) {
      const body = text(name).replace(/http:\/\/www\.w3\.org\/2000\/svg/g, '');
      expect({ name, external: /(?:src|href|url\(|import[^;]*from)\s*=?\s*["']?(?:https?:)?\/\//.test(body) }).toEqual({
        name,
        external: false,
      });
      if (name.endsWith('.js'))
        expect({ name, html: /innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(body) }).toEqual({ name, html: false });
    }
  });

  it('answers no path outside its own files', () => {
    for (const path of ['../dashboard-assets.ts', '/etc/passwd', 'js/../../dashboard.module.ts', ''])
      expect(assets.get(path)).toBeUndefined();
  });
});
