import { loggedUrl } from './logging.module';

describe('loggedUrl', () => {
  it.each<[string, string]>([
    ['/api/v1/external/webhooks', '/api/v1/external/webhooks'],
    ['/api/v1/external/webhooks?limit=5&cursor=abc&isActive=true', '/api/v1/external/webhooks?limit=5&cursor=abc&isActive=true'],
    ['/api/v1/external/webhooks?api_key=hlk_secret&limit=5', '/api/v1/external/webhooks?api_key=[redacted]&limit=5'],
    ['/x?token=t&key=k&x-api-key=z', '/x?token=[redacted]&key=[redacted]&x-api-key=[redacted]'],
    ['/x?flag&status=failed', '/x?flag&status=failed'],
    ['/x?%zz=1&event=order.created', '/x?%zz=[redacted]&event=order.created'],
    ['/x?', '/x?'],
  ])('logs %s as %s', (url, logged) => {
    expect(loggedUrl(url)).toBe(logged);
  });
});
