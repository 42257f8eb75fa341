import { endpointHeaderProblems, endpointHeadersSize, isSensitiveHeader } from './endpoint-headers';

describe('endpointHeaderProblems', () => {
  it('accepts tokens with printable values', () => {
    expect(endpointHeaderProblems({})).toEqual([]);
    expect(endpointHeaderProblems({ 'X-Store-Token': 'abc 123', Authorization: 'Bearer t0k3n', "a!#$%&'*+-.^_`|~9": '' })).toEqual([]);
  });

  it('refuses what is not an object of strings', () => {
    for (const bad of [null, [], 'X: y', 3])
      expect(endpointHeaderProblems(bad)).toEqual(['headers must be an object of header names to string values']);
    expect(endpointHeaderProblems({ 'X-A': 1 })).toEqual(['headers: the value of "X-A" must be a string']);
  });

  it.each([
    'Content-Type',
    'content-length',
    'Host',
    'User-Agent',
    'Connection',
    'Transfer-Encoding',
    'Upgrade',
    'TE',
    'Keep-Alive',
    'Proxy-Authorization',
  ])('refuses %s, set by Hookline or the connection', (name) => {
    expect(endpointHeaderProblems({ [name]: 'x' })).toEqual([`headers: "${name}" is set by Hookline or the connection and cannot be set`]);
  });

  it.each(['X-Webhook-Signature', 'x-webhook-anything', 'webhook-id', 'Webhook-Signature'])('refuses %s, a signature header', (name) => {
    expect(endpointHeaderProblems({ [name]: 'x' })).toEqual([`headers: "${name}" is reserved for the signature headers and cannot be set`]);
  });

  it('refuses bad names and values, naming the header', () => {
    expect(endpointHeaderProblems({ 'X Token': 'a' })).toEqual([
      `headers: "X Token" is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`,
    ]);
    expect(endpointHeaderProblems({ 'X-A': 'a\r\nX-Injected: 1' })).toEqual([
      'headers: the value of "X-A" must be printable ASCII (no control characters or line breaks)',
    ]);
    expect(endpointHeaderProblems({ 'X-A': 'é' })).toHaveLength(1);
    expect(endpointHeaderProblems({ 'X-A': 'a'.repeat(1025) })).toEqual(['headers: the value of "X-A" must be at most 1024 characters']);
    expect(endpointHeaderProblems({ 'X-A': 'a'.repeat(1024) })).toEqual([]);
  });

  it('refuses more than 20 and the same name twice in two cases', () => {
    expect(endpointHeaderProblems(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-${i}`, 'v'])))).toEqual([
      'headers must have at most 20 entries',
    ]);
    expect(endpointHeaderProblems({ 'X-Token': 'a', 'x-token': 'b' })).toEqual([
      'headers: "x-token" is given twice (header names ignore case)',
    ]);
  });

  it('refuses a name over 256 characters, quoting only its start', () => {
    expect(endpointHeaderProblems({ ['X'.repeat(256)]: 'v' })).toEqual([]);
    expect(endpointHeaderProblems({ ['X'.repeat(1_000_000)]: 'v' })).toEqual([
      `headers: the name "${'X'.repeat(32)}…" must be at most 256 characters (it has 1000000)`,
    ]);
  });

  it('refuses names and values over 8 KiB together, and accepts exactly 8 KiB', () => {
    // 8 headers of a 24-character name and a 1000-character value: 8,192 bytes.
    const full = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`X-Header-Number-${i}-Pad-Pad`.slice(0, 24), 'v'.repeat(1000)]));
    expect(endpointHeadersSize(full)).toBe(8192);
    expect(endpointHeaderProblems(full)).toEqual([]);
    expect(endpointHeaderProblems({ ...full, Y: '' })).toEqual([
      'headers: all names and values together must be at most 8192 bytes (these are 8193)',
    ]);
  });

  it('accepts null for a sensitive header only, which keeps its stored value', () => {
    expect(endpointHeaderProblems({ Authorization: null, 'X-Api-Key': null })).toEqual([]);
    expect(endpointHeaderProblems({ 'X-Store': null })).toEqual(['headers: the value of "X-Store" must be a string']);
    expect(endpointHeaderProblems({ 'X-Token': 3 })).toEqual([
      'headers: the value of "X-Token" must be a string (or null to keep the stored one)',
    ]);
    expect(endpointHeaderProblems({ Authorization: '' })).toEqual([
      'headers: the value of "Authorization" must not be empty (give the value, or null to keep the stored one)',
    ]);
    expect(endpointHeaderProblems({ 'X-Store': '' })).toEqual([]);
  });
});

describe('isSensitiveHeader', () => {
  it.each([
    'Authorization',
    'proxy-authorization',
    'COOKIE',
    'X-Api-Key',
    'X-Shopify-Access-Token',
    'Client-Secret',
    'X-Auth-User',
    'X-Password',
    'X-Partner-Signature',
    'monkey',
  ])('takes %s to carry a credential', (name) => {
    expect(isSensitiveHeader(name)).toBe(true);
  });

  it.each(['X-Store', 'Accept', 'X-Tenant', 'Set-Cookie-Policy', 'X-Request-Id'])('shows %s', (name) => {
    expect(isSensitiveHeader(name)).toBe(false);
  });
});
