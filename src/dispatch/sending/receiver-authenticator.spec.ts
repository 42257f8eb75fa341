import type { Dispatcher } from 'undici';
import type { ReceiverAccess } from '../../webhooks/receiver-credentials';
import { AttemptDeadlines } from './attempt-deadlines';
import { OAuth2TokenCache } from './oauth2-token-cache';
import { ReceiverAuthenticator } from './receiver-authenticator';

describe('ReceiverAuthenticator', () => {
  const deadlines = new AttemptDeadlines();
  const shared = { dispatch: () => true, close: () => Promise.resolve(), destroy: () => Promise.resolve() };
  const oauth2: ReceiverAccess = {
    endpointId: 'wh_1',
    version: 'v1',
    auth: { type: 'oauth2', tokenUrl: 'https://auth.example/token', clientId: 'c', clientSecret: 's' },
  };
  let issued: number;
  let fetchToken: () => Promise<{ accessToken: string }>;
  let authenticator: ReceiverAuthenticator;

  beforeEach(() => {
    issued = 0;
    fetchToken = () => Promise.resolve({ accessToken: `t${++issued}` });
    const tokens = new OAuth2TokenCache(() => fetchToken());
    authenticator = new ReceiverAuthenticator(
      shared as unknown as Dispatcher,
      { assertAddressAllowed: () => undefined },
      1_000,
      () => ({ ...shared }),
      tokens,
    );
  });

  it('adds Basic and Bearer headers, and nothing without auth', async () => {
    const signal = deadlines.start(1_000);
    const basic = { endpointId: 'wh_1', version: 'v', auth: { type: 'basic' as const, username: 'u', password: 'p' } };
    await expect(authenticator.authorization(basic, signal)).resolves.toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    await expect(
      authenticator.authorization({ endpointId: 'wh_1', version: 'v', auth: { type: 'bearer', token: 'tk' } }, signal),
    ).resolves.toBe('Bearer tk');
    await expect(authenticator.authorization(undefined, signal)).resolves.toBeUndefined();
    deadlines.end(signal);
  });

  it('sends an OAuth2 token, and a new one after the receiver refused it', async () => {
    const signal = deadlines.start(1_000);
    const first = await authenticator.authorization(oauth2, signal);
    expect(first).toBe('Bearer t1');
    await expect(authenticator.authorization(oauth2, signal)).resolves.toBe('Bearer t1');
    await expect(authenticator.afterRefusal(oauth2, first, signal)).resolves.toBe('Bearer t2');
    expect(issued).toBe(2);
    deadlines.end(signal);
  });

  it('does not try again after a 401 to basic or bearer auth', async () => {
    const signal = deadlines.start(1_000);
    const bearer: ReceiverAccess = { endpointId: 'wh_1', version: 'v', auth: { type: 'bearer', token: 'tk' } };
    await expect(authenticator.afterRefusal(bearer, 'Bearer tk', signal)).resolves.toBeUndefined();
    deadlines.end(signal);
  });

  it('fails the attempt clearly when no token comes before its deadline', async () => {
    fetchToken = () => new Promise(() => undefined);
    const signal = deadlines.start(50);
    await expect(authenticator.authorization(oauth2, signal)).rejects.toThrow(
      "OAuth2 token request failed: no token before the attempt's time limit",
    );
  });

  it('gives an endpoint with a client certificate its own pool', () => {
    const withTls = { ...oauth2, tls: { clientCertificate: 'c', clientKey: 'k' } };
    const own = authenticator.dispatcherFor(withTls, shared);
    expect(own).not.toBe(shared);
    expect(authenticator.dispatcherFor(withTls, shared)).toBe(own);
    expect(authenticator.dispatcherFor(oauth2, shared)).toBe(shared);
  });
});
