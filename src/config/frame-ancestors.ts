/**
 * PORTAL_FRAME_ANCESTORS: the origins whose pages may frame the dashboard, comma separated
 * (`https://admin.example.com, https://admin.example.org`), as a Content-Security-Policy
 * `frame-ancestors` list takes them. Only whole origins: a path would be ignored by browsers, and a
 * wildcard or scheme alone would let any site frame a signed-in dashboard (clickjacking).
 */
export function parseFrameAncestors(text: string | undefined): { origins: string[]; problems: string[] } {
  const origins: string[] = [];
  const problems: string[] = [];
  for (const entry of (text ?? '').split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const origin = originOf(entry);
    if (origin) {
      if (!origins.includes(origin)) origins.push(origin);
    } else {
      problems.push(
        `PORTAL_FRAME_ANCESTORS must list origins such as https://admin.example.com, comma separated; ${JSON.stringify(entry.slice(0, 100))} is not one`,
      );
    }
  }
  return { origins, problems };
}

function originOf(entry: string): string | undefined {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  // The whole entry must be the origin: no path, query, fragment, user or wildcard.
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password || entry.includes('*')) return undefined;
  return url.origin;
}
