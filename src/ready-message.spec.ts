import { browsableHost, readyMessage, ReadyFacts } from './ready-message';

const facts: ReadyFacts = { serviceName: 'Hookline', role: 'all', host: '0.0.0.0', port: 3000, adminApiKeySet: false };

describe('readyMessage', () => {
  it('lists the URLs to open and the key that was just generated', () => {
    expect(readyMessage({ ...facts, generatedKey: 'hlk_abc' })).toBe(
      [
        '',
        'Hookline is ready',
        '  API:       http://localhost:3000/api/v1/external',
        '  API docs:  http://localhost:3000/docs',
        '  Dashboard: http://localhost:3000/dashboard',
        '  Admin API key (every scope, store st_default; shown only now, keep it safe):',
        '    hlk_abc',
        '',
        '',
      ].join('\n'),
    );
  });

  it('never shows ADMIN_API_KEY, and says how to replace a key shown at an earlier start', () => {
    expect(readyMessage({ ...facts, adminApiKeySet: true })).toContain('  Admin API key: the value of ADMIN_API_KEY\n');
    expect(readyMessage(facts)).toContain('if it is lost, restart with ADMIN_API_KEY set to a new one');
  });

  it('gives a worker its health and metrics URLs only', () => {
    const message = readyMessage({ ...facts, role: 'worker', serviceName: 'Relay', host: '127.0.0.1', port: 8080 });
    expect(message).toContain(
      'Relay is ready (ROLE=worker)\n  Health:    http://127.0.0.1:8080/health\n  Metrics:   http://127.0.0.1:8080/metrics\n',
    );
    expect(message).not.toContain('/dashboard');
  });
});

describe('browsableHost', () => {
  it.each([
    ['0.0.0.0', 'localhost'],
    ['::', 'localhost'],
    ['', 'localhost'],
    ['127.0.0.1', '127.0.0.1'],
    ['::1', '[::1]'],
    ['hooks.internal', 'hooks.internal'],
  ])('%j -> %s', (host, expected) => {
    expect(browsableHost(host)).toBe(expected);
  });
});
