import { X509Certificate } from 'node:crypto';
import { createAuthority, type Authority, type IssuedPem } from '../../test/support/certificates';
import {
  clientTlsProblems,
  openAccess,
  receiverAuthProblems,
  sealAuth,
  sealTls,
  staticAuthorization,
  type ReceiverAuth,
} from './receiver-credentials';
import { SecretCipher } from './secret-cipher';

describe('receiver credentials', () => {
  const cipher = new SecretCipher(Buffer.alloc(32, 3));
  let authority: Authority;
  let client: IssuedPem;
  let other: IssuedPem;

  beforeAll(async () => {
    authority = await createAuthority();
    client = await authority.issue({ commonName: 'hookline-client', use: 'client' });
    other = await authority.issue({ commonName: 'someone-else', use: 'client' });
  });

  describe('receiverAuthProblems', () => {
    it('accepts each method with its fields', () => {
      expect(receiverAuthProblems({ type: 'basic', username: 'hook', password: 'pw' })).toEqual([]);
      expect(receiverAuthProblems({ type: 'bearer', token: 'abc.def-ghi' })).toEqual([]);
      expect(
        receiverAuthProblems({
          type: 'oauth2',
          tokenUrl: 'https://auth.example.com/token',
          clientId: 'c',
          clientSecret: 's',
          scope: 'a b',
        }),
      ).toEqual([]);
    });

    it('names the field that is wrong', () => {
      expect(receiverAuthProblems({ type: 'digest' })).toEqual(['auth.type must be one of basic, bearer, oauth2']);
      expect(receiverAuthProblems({ type: 'basic', username: 'hook' })).toEqual(['auth.password must be a non-empty string']);
      expect(receiverAuthProblems({ type: 'basic', username: 'a:b', password: 'x' })).toEqual([
        'auth.username must not contain ":" (RFC 7617)',
      ]);
      expect(receiverAuthProblems({ type: 'bearer', token: 'two words' })).toEqual([
        'auth.token must be visible ASCII characters, no spaces',
      ]);
      expect(receiverAuthProblems({ type: 'bearer', token: 't', password: 'x' })).toEqual(['auth.password is not a field of bearer auth']);
      expect(receiverAuthProblems({ type: 'oauth2', tokenUrl: 'nope', clientId: 'c', clientSecret: 's' })).toEqual([
        'auth.tokenUrl must be an absolute URL',
      ]);
      expect(receiverAuthProblems({ type: 'basic', username: 'x\r\nInjected: 1', password: 'p' })).toEqual([
        'auth.username must not contain control characters',
      ]);
      expect(receiverAuthProblems('basic')[0]).toMatch(/^auth must be an object/);
    });
  });

  describe('clientTlsProblems', () => {
    it('accepts a certificate with its key, and an authority', () => {
      expect(clientTlsProblems({ clientCertificate: client.certificate, clientKey: client.key, ca: authority.certificate })).toEqual([]);
    });

    it('refuses a key that is not the certificate’s', () => {
      expect(clientTlsProblems({ clientCertificate: client.certificate, clientKey: other.key })).toEqual([
        'tls.clientKey does not match tls.clientCertificate',
      ]);
    });

    it('refuses PEM that does not parse, naming the field', () => {
      const broken = client.certificate.replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!');
      expect(clientTlsProblems({ clientCertificate: broken, clientKey: client.key })).toContain(
        'tls.clientCertificate holds a certificate that does not parse',
      );
      expect(clientTlsProblems({ clientCertificate: 'hello', clientKey: client.key })[0]).toMatch(
        /^tls.clientCertificate must be one or more PEM/,
      );
      expect(clientTlsProblems({ clientCertificate: client.certificate, clientKey: 'not a key' })).toEqual([
        'tls.clientKey must be an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)',
      ]);
      expect(clientTlsProblems({ clientCertificate: client.certificate, clientKey: client.key, ca: client.key })[0]).toMatch(
        /^tls.ca must be/,
      );
    });

    it('refuses an expired certificate and an unknown field', async () => {
      const expired = await authority.issue({ commonName: 'old', use: 'client', validDays: -1 });
      expect(clientTlsProblems({ clientCertificate: expired.certificate, clientKey: expired.key })[0]).toMatch(
        /^tls.clientCertificate expired on \d{4}-/,
      );
      expect(clientTlsProblems({ clientCertificate: client.certificate, clientKey: client.key, pin: 'x' })).toEqual([
        'tls.pin is not a field of tls',
      ]);
    });
  });

  describe('sealing', () => {
    const oauth2: ReceiverAuth = { type: 'oauth2', tokenUrl: 'https://a.example/t', clientId: 'c', clientSecret: 'very-secret' };

    it('shows the method without its secret and opens the whole for sending', () => {
      const auth = sealAuth(cipher, 'wh_1', oauth2);
      expect(auth.auth).toEqual({ type: 'oauth2', tokenUrl: 'https://a.example/t', clientId: 'c', scope: null, audience: null });
      expect(auth.authSealed).not.toContain('very-secret');
      const tls = sealTls(cipher, 'wh_1', { clientCertificate: client.certificate, clientKey: client.key });
      expect(tls.tls?.clientCertificate).toMatchObject({
        subject: 'CN=hookline-client',
        issuer: 'CN=Hookline Test CA',
        fingerprint: new X509Certificate(client.certificate).fingerprint256,
      });
      expect(tls.tls?.ca).toBeNull();
      const access = openAccess(cipher, 'wh_1', { authSealed: auth.authSealed, tlsSealed: tls.tlsSealed });
      expect(access).toMatchObject({ endpointId: 'wh_1', auth: oauth2, tls: { clientKey: client.key } });
    });

    it('binds the sealed value to its endpoint, and versions it by content', () => {
      const { authSealed } = sealAuth(cipher, 'wh_1', { type: 'bearer', token: 't1' });
      expect(() => openAccess(cipher, 'wh_2', { authSealed, tlsSealed: null })).toThrow();
      const again = sealAuth(cipher, 'wh_1', { type: 'bearer', token: 't1' }).authSealed;
      const changed = sealAuth(cipher, 'wh_1', { type: 'bearer', token: 't2' }).authSealed;
      const version = (sealed: string | null) => openAccess(cipher, 'wh_1', { authSealed: sealed, tlsSealed: null })!.version;
      expect(version(again)).toBe(version(authSealed));
      expect(version(changed)).not.toBe(version(authSealed));
      expect(openAccess(cipher, 'wh_1', { authSealed: null, tlsSealed: null })).toBeUndefined();
    });
  });

  it('builds the Authorization of basic and bearer auth', () => {
    expect(staticAuthorization({ type: 'basic', username: 'Aladdin', password: 'open sesame' })).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
    expect(staticAuthorization({ type: 'bearer', token: 'abc' })).toBe('Bearer abc');
  });
});
