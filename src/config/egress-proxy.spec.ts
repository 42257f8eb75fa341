import { parseEgressProxy } from './egress-proxy';

describe('parseEgressProxy', () => {
  it('is unset when the variable is', () => {
    expect(parseEgressProxy(undefined)).toEqual({ problems: [] });
    expect(parseEgressProxy('  ')).toEqual({ problems: [] });
  });

  it('reads host and port, the port defaulting to 80', () => {
    expect(parseEgressProxy('http://proxy.internal:3128').proxy).toEqual({
      origin: 'http://proxy.internal:3128',
      host: 'proxy.internal',
      port: 3128,
    });
    expect(parseEgressProxy('http://10.0.0.8/').proxy).toEqual({ origin: 'http://10.0.0.8', host: '10.0.0.8', port: 80 });
    expect(parseEgressProxy('http://[fd00::8]:3128').proxy).toMatchObject({ host: 'fd00::8', port: 3128 });
  });

  it('turns a user and password into Proxy-Authorization, and keeps them out of the origin', () => {
    const { proxy } = parseEgressProxy('http://hookline:p%40ss@proxy.internal:3128');
    expect(proxy?.origin).toBe('http://proxy.internal:3128');
    expect(proxy?.authorization).toBe(`Basic ${Buffer.from('hookline:p@ss').toString('base64')}`);
  });

  it.each([
    ['proxy internal', 'it is not a URL'],
    ['proxy.internal:3128', 'the scheme is proxy.internal:'],
    ['https://proxy.internal:3128', 'https:// proxies are not supported'],
    ['socks5://proxy.internal:1080', 'the scheme is socks5:'],
    ['http://proxy.internal:3128/path', 'it must not have a path, query or fragment'],
    ['http://proxy.internal:3128?x=1', 'it must not have a path, query or fragment'],
  ])('refuses %j: %s', (text, why) => {
    const { proxy, problems } = parseEgressProxy(text);
    expect(proxy).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^EGRESS_PROXY_URL must be the http:\/\/ URL of a forward proxy/);
    expect(problems[0]).toContain(why);
  });

  it('never repeats a password in its message', () => {
    const { problems } = parseEgressProxy('ftp://user:hunter2@proxy.internal');
    expect(problems.join()).not.toContain('hunter2');
  });
});
