import { parseFrameAncestors } from './frame-ancestors';

describe('parseFrameAncestors', () => {
  it('is empty when unset or blank', () => {
    expect(parseFrameAncestors(undefined)).toEqual({ origins: [], problems: [] });
    expect(parseFrameAncestors(' , ')).toEqual({ origins: [], problems: [] });
  });

  it('takes origins, comma separated, in their usual form and without repeats', () => {
    expect(parseFrameAncestors('https://Admin.Example.com, http://localhost:8080/,https://admin.example.com')).toEqual({
      origins: ['https://admin.example.com', 'http://localhost:8080'],
      problems: [],
    });
    expect(parseFrameAncestors('https://admin.example.com:443').origins).toEqual(['https://admin.example.com']);
  });

  it.each([
    'admin.example.com',
    'https://admin.example.com/pages',
    'https://*.example.com',
    'ftp://files.example.com',
    "'self'",
    '*',
    'https:',
  ])('refuses %s, naming the variable', (entry) => {
    const { problems } = parseFrameAncestors(`https://ok.example.com,${entry}`);
    expect(problems).toEqual([expect.stringContaining('PORTAL_FRAME_ANCESTORS must list origins')]);
    expect(problems[0]).toContain(JSON.stringify(entry));
  });
});
