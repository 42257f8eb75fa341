import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { OAuth2TokenError, requestToken } from './oauth2-token-request';

describe('requestToken', () => {
  let server: Server;
  let tokenUrl: string;
  let respond: (req: IncomingMessage, body: string, res: ServerResponse) => void;
  const seen: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  const agent = new Agent();
  const allowAll = { assertAddressAllowed: () => undefined };
  const auth = (extra = {}) => ({
    type: 'oauth2' as const,
    tokenUrl,
    clientId: 'hook line',
    clientSecret: 's3cr:t',
    ...extra,
  });
  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        respond(req, body, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    tokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`;
  });

  afterAll(async () => {
    await agent.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => (seen.length = 0));

  it('asks with the client-credentials grant and HTTP Basic client authentication', async () => {
    respond = (_req, _body, res) => json(res, 200, { access_token: 'at_1', token_type: 'Bearer', expires_in: 3600 });
    await expect(requestToken(agent, allowAll, auth({ scope: 'send', audience: 'https://erp' }), 5_000)).resolves.toEqual({
      accessToken: 'at_1',
      expiresIn: 3600,
    });
    const [{ headers, body }] = seen;
    expect(headers['content-type']).toBe('application/x-www-form-urlencoded');
    // RFC 6749 §2.3.1: id and secret form-encoded, then joined for Basic.
    expect(Buffer.from(headers.authorization!.replace('Basic ', ''), 'base64').toString()).toBe('hook%20line:s3cr%3At');
    expect(Object.fromEntries(new URLSearchParams(body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'send',
      audience: 'https://erp',
    });
  });

  it('says why when the token URL refuses, with the OAuth2 error code', async () => {
    respond = (_req, _body, res) => json(res, 401, { error: 'invalid_client' });
    const refused = requestToken(agent, allowAll, auth(), 5_000);
    await expect(refused).rejects.toBeInstanceOf(OAuth2TokenError);
    await expect(refused).rejects.toThrow('OAuth2 token request failed: HTTP 401 from token URL (invalid_client)');
  });

  it('refuses answers without a usable bearer token', async () => {
    respond = (_req, _body, res) => {
      res.writeHead(200);
      res.end('<html>');
    };
    await expect(requestToken(agent, allowAll, auth(), 5_000)).rejects.toThrow(
      'OAuth2 token request failed: the token URL did not answer JSON',
    );
    respond = (_req, _body, res) => json(res, 200, { token_type: 'Bearer' });
    await expect(requestToken(agent, allowAll, auth(), 5_000)).rejects.toThrow('no usable access_token');
    respond = (_req, _body, res) => json(res, 200, { access_token: 'x', token_type: 'mac' });
    await expect(requestToken(agent, allowAll, auth(), 5_000)).rejects.toThrow('token_type mac, not Bearer');
  });

  it('gives up at its time limit, and says a refused connection', async () => {
    respond = () => undefined; // never answers
    await expect(requestToken(agent, allowAll, auth(), 200)).rejects.toThrow('OAuth2 token request failed: no answer within 200 ms');
    const closed = auth({ tokenUrl: 'http://127.0.0.1:1/token' });
    await expect(requestToken(agent, allowAll, closed, 2_000)).rejects.toThrow('OAuth2 token request failed: connection refused');
  });

  it('checks an address literal against the URL policy before connecting', async () => {
    const policy = {
      assertAddressAllowed: () => {
        throw Object.assign(new Error('refusing to connect to 127.0.0.1 (loopback)'), { code: 'EHOSTBLOCKED' });
      },
    };
    await expect(requestToken(agent, policy, auth(), 2_000)).rejects.toThrow(
      'OAuth2 token request failed: blocked: refusing to connect to 127.0.0.1 (loopback)',
    );
    expect(seen).toHaveLength(0);
  });
});
