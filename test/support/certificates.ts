import 'reflect-metadata'; // tsyringe, under @peculiar/x509, needs it loaded first
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

type CryptoKey = webcrypto.CryptoKey;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** A certificate and its key, in PEM. */
export interface IssuedPem {
  certificate: string;
  key: string;
}

export interface Authority extends IssuedPem {
  /** Issues a certificate signed by this authority. */
  issue(options: IssueOptions): Promise<IssuedPem>;
}

export interface IssueOptions {
  commonName: string;
  /** What it is for: a TLS server (with 127.0.0.1 and localhost as its names) or a TLS client. */
  use: 'server' | 'client';
  /** Days from now it is valid until (negative: already expired). Default 30. */
  validDays?: number;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

/**
 * A test certificate authority made in memory (the specs' stand-in for a company's private CA):
 * node:crypto reads certificates but cannot issue them.
 */
export async function createAuthority(commonName = 'Hookline Test CA'): Promise<Authority> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const now = Date.now();
  const name = `CN=${commonName}`;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 365 * DAY_MS),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  let serial = 1;
  return {
    certificate: ca.toString('pem'),
    key: await keyPem(keys.privateKey),
    async issue({ commonName: subject, use, validDays = 30 }) {
      const leafKeys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
      const notAfter = new Date(Date.now() + validDays * DAY_MS);
      const certificate = await x509.X509CertificateGenerator.create({
        serialNumber: (++serial).toString(16).padStart(2, '0'),
        subject: `CN=${subject}`,
        issuer: ca.subject,
        notBefore: new Date(Math.min(now - DAY_MS, notAfter.getTime() - DAY_MS)),
        notAfter,
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        signingAlgorithm: ALGORITHM,
        extensions: [
          new x509.BasicConstraintsExtension(false),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([use === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
          ...(use === 'server'
            ? [
                new x509.SubjectAlternativeNameExtension([
                  { type: 'ip', value: '127.0.0.1' },
                  { type: 'dns', value: 'localhost' },
                ]),
              ]
            : []),
        ],
      });
      return { certificate: certificate.toString('pem'), key: await keyPem(leafKeys.privateKey) };
    },
  };
}
