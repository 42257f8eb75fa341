import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { MAX_URL_LENGTH } from './url-policy';
import type { SecretCipher } from './secret-cipher';

/** How Hookline proves itself to an endpoint's receiver, secret parts included (docs/receivers.md). */
export type ReceiverAuth =
  | { type: 'basic'; username: string; password: string }
  | { type: 'bearer'; token: string }
  | { type: 'oauth2'; tokenUrl: string; clientId: string; clientSecret: string; scope?: string; audience?: string };

export type ReceiverAuthType = ReceiverAuth['type'];
export const RECEIVER_AUTH_TYPES: readonly ReceiverAuthType[] = ['basic', 'bearer', 'oauth2'];

/** A client certificate for mutual TLS, and optionally the authority the receiver's certificate must chain to; PEM. */
export interface ClientTls {
  clientCertificate: string;
  clientKey: string;
  ca?: string;
}

/** `auth` as the API shows it: the method and its non-secret fields. */
export type ShownAuth =
  | { type: 'basic'; username: string }
  | { type: 'bearer' }
  | { type: 'oauth2'; tokenUrl: string; clientId: string; scope: string | null; audience: string | null };

/** What a certificate says about itself, without the certificate. */
export interface CertificateSummary {
  subject: string;
  issuer: string;
  /** SHA-256 of the DER, colon-separated hex, as browsers and openssl show it. */
  fingerprint: string;
  validFrom: string;
  validTo: string;
}

/** `tls` as the API shows it: summaries of the certificates, never the key. */
export interface ShownTls {
  clientCertificate: CertificateSummary;
  ca: CertificateSummary[] | null;
}

/** An endpoint's credentials opened for sending, and a version that changes whenever they do. */
export interface ReceiverAccess {
  endpointId: string;
  /** Token caches and TLS agents are kept by endpoint and this version, so a change takes effect at once. */
  version: string;
  auth?: ReceiverAuth;
  tls?: ClientTls;
}

/** Credentials as stored: the shown part in clear, the whole sealed. */
export interface StoredCredentials {
  auth: ShownAuth | null;
  authSealed: string | null;
  tls: ShownTls | null;
  tlsSealed: string | null;
}

const MAX_NAME_LENGTH = 256;
const MAX_SECRET_LENGTH = 4096;
const MAX_PEM_LENGTH = 64 * 1024;

/** Visible ASCII: what can follow `Bearer ` in a header without being split or smuggled. */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/** No control characters (C0, DEL, C1): a Basic credential is UTF-8 text, but never a line break. */
const NO_CONTROLS = /^\P{Cc}*$/u;

const FIELDS: Record<ReceiverAuthType, { required: string[]; optional: string[] }> = {
  basic: { required: ['username', 'password'], optional: [] },
  bearer: { required: ['token'], optional: [] },
  oauth2: { required: ['tokenUrl', 'clientId', 'clientSecret'], optional: ['scope', 'audience'] },
};

const LIMITS: Record<string, number> = {
  username: MAX_NAME_LENGTH,
  password: MAX_SECRET_LENGTH,
  token: MAX_SECRET_LENGTH,
  tokenUrl: MAX_URL_LENGTH,
  clientId: MAX_NAME_LENGTH,
  clientSecret: MAX_SECRET_LENGTH,
  scope: 1024,
  audience: MAX_URL_LENGTH,
};

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What is wrong with an `auth` value, each problem naming its field (`auth.password`); empty when
 * it is good. The token URL's address is the URL policy's to judge, later.
 */
export function receiverAuthProblems(value: unknown): string[] {
  if (!isRecord(value)) return ['auth must be an object with a type (basic, bearer or oauth2), or null'];
  const type = value.type;
  if (typeof type !== 'string' || !(RECEIVER_AUTH_TYPES as readonly string[]).includes(type)) {
    return [`auth.type must be one of ${RECEIVER_AUTH_TYPES.join(', ')}`];
  }
  const { required, optional } = FIELDS[type as ReceiverAuthType];
  const problems: string[] = [];
  for (const name of Object.keys(value)) {
    if (name !== 'type' && !required.includes(name) && !optional.includes(name))
      problems.push(`auth.${name} is not a field of ${type} auth`);
  }
  for (const name of [...required, ...optional]) {
    const field = value[name];
    if (field === undefined && optional.includes(name)) continue;
    if (typeof field !== 'string' || field.length === 0) {
      problems.push(`auth.${name} must be a non-empty string`);
      continue;
    }
    if (field.length > LIMITS[name]) problems.push(`auth.${name} must be at most ${LIMITS[name]} characters`);
    else if (!NO_CONTROLS.test(field)) problems.push(`auth.${name} must not contain control characters`);
    else if (name === 'username' && field.includes(':')) problems.push('auth.username must not contain ":" (RFC 7617)');
    else if (name === 'token' && !VISIBLE_ASCII.test(field)) problems.push('auth.token must be visible ASCII characters, no spaces');
    else if (name === 'tokenUrl' && !URL.canParse(field)) problems.push('auth.tokenUrl must be an absolute URL');
  }
  return problems;
}

/** PEM blocks of a text: their labels and whether anything but blocks and whitespace is in it. */
function pemBlocks(text: string): { blocks: Array<{ label: string; pem: string }>; stray: boolean } {
  const blocks: Array<{ label: string; pem: string }> = [];
  const pattern = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
  const rest = text.replace(pattern, (pem, label: string) => {
    blocks.push({ label, pem });
    return '';
  });
  return { blocks, stray: rest.trim().length > 0 };
}

/** The certificates of a PEM field, or the problem that names it. */
function certificatesOf(field: string, value: unknown): X509Certificate[] | string {
  if (typeof value !== 'string' || value.length === 0) return `${field} must be a non-empty PEM string`;
  if (value.length > MAX_PEM_LENGTH) return `${field} must be at most ${MAX_PEM_LENGTH} characters`;
  const { blocks, stray } = pemBlocks(value);
  if (blocks.length === 0 || stray || blocks.some((block) => block.label !== 'CERTIFICATE')) {
    return `${field} must be one or more PEM certificates (-----BEGIN CERTIFICATE-----)`;
  }
  try {
    return blocks.map((block) => new X509Certificate(block.pem));
  } catch {
    return `${field} holds a certificate that does not parse`;
  }
}

/**
 * What is wrong with a `tls` value, each problem naming its field; empty when it is good. The
 * client certificate (its first block; the rest may be its chain) must be in force and match the
 * key; `ca` is one or more certificates.
 */
export function clientTlsProblems(value: unknown, now = new Date()): string[] {
  if (!isRecord(value)) return ['tls must be an object {clientCertificate, clientKey, ca?}, or null'];
  const problems = Object.keys(value)
    .filter((name) => !['clientCertificate', 'clientKey', 'ca'].includes(name))
    .map((name) => `tls.${name} is not a field of tls`);
  const chain = certificatesOf('tls.clientCertificate', value.clientCertificate);
  if (typeof chain === 'string') problems.push(chain);
  else if (new Date(chain[0].validTo).getTime() <= now.getTime()) {
    problems.push(`tls.clientCertificate expired on ${new Date(chain[0].validTo).toISOString()}`);
  }
  let key: KeyObject | undefined;
  if (typeof value.clientKey !== 'string' || value.clientKey.length === 0) problems.push('tls.clientKey must be a non-empty PEM string');
  else if (value.clientKey.length > MAX_PEM_LENGTH) problems.push(`tls.clientKey must be at most ${MAX_PEM_LENGTH} characters`);
  else {
    try {
      key = createPrivateKey({ key: value.clientKey, format: 'pem' });
    } catch {
      problems.push('tls.clientKey must be an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)');
    }
  }
  if (key && typeof chain !== 'string' && !chain[0].checkPrivateKey(key)) {
    problems.push('tls.clientKey does not match tls.clientCertificate');
  }
  if (value.ca !== undefined) {
    const ca = certificatesOf('tls.ca', value.ca);
    if (typeof ca === 'string') problems.push(ca);
  }
  return problems;
}

/** One line per name part, as X509Certificate gives them, joined the way people read them: `CN=x, O=y`. */
const oneLine = (name: string): string => name.split('\n').join(', ');

export function summarize(certificate: X509Certificate): CertificateSummary {
  return {
    subject: oneLine(certificate.subject),
    issuer: oneLine(certificate.issuer),
    fingerprint: certificate.fingerprint256,
    validFrom: new Date(certificate.validFrom).toISOString(),
    validTo: new Date(certificate.validTo).toISOString(),
  };
}

export function showAuth(auth: ReceiverAuth): ShownAuth {
  switch (auth.type) {
    case 'basic':
      return { type: 'basic', username: auth.username };
    case 'bearer':
      return { type: 'bearer' };
    case 'oauth2':
      return {
        type: 'oauth2',
        tokenUrl: auth.tokenUrl,
        clientId: auth.clientId,
        scope: auth.scope ?? null,
        audience: auth.audience ?? null,
      };
  }
}

export function showTls(tls: ClientTls): ShownTls {
  const [leaf] = pemBlocks(tls.clientCertificate).blocks;
  return {
    clientCertificate: summarize(new X509Certificate(leaf.pem)),
    ca: tls.ca ? pemBlocks(tls.ca).blocks.map((block) => summarize(new X509Certificate(block.pem))) : null,
  };
}

/**
 * Sealed bound to the endpoint and to the purpose, so that neither another row's credentials nor
 * the endpoint's own secret or headers open in their place.
 */
const boundTo = (webhookId: string, part: 'auth' | 'tls'): string => `${webhookId} ${part}`;

/** Only the fields of the method, so that nothing stray is stored or sent. */
function tidyAuth(auth: ReceiverAuth): ReceiverAuth {
  switch (auth.type) {
    case 'basic':
      return { type: 'basic', username: auth.username, password: auth.password };
    case 'bearer':
      return { type: 'bearer', token: auth.token };
    case 'oauth2': {
      const { tokenUrl, clientId, clientSecret, scope, audience } = auth;
      return { type: 'oauth2', tokenUrl, clientId, clientSecret, ...(scope ? { scope } : {}), ...(audience ? { audience } : {}) };
    }
  }
}

/** `auth` (validated) as stored; null clears it. */
export function sealAuth(cipher: Pick<SecretCipher, 'encrypt'>, webhookId: string, auth: ReceiverAuth | null) {
  if (auth === null) return { auth: null, authSealed: null };
  const tidy = tidyAuth(auth);
  return { auth: showAuth(tidy), authSealed: cipher.encrypt(JSON.stringify(tidy), boundTo(webhookId, 'auth')) };
}

/** `tls` (validated) as stored; null clears it. */
export function sealTls(cipher: Pick<SecretCipher, 'encrypt'>, webhookId: string, tls: ClientTls | null) {
  if (tls === null) return { tls: null, tlsSealed: null };
  const tidy: ClientTls = { clientCertificate: tls.clientCertificate, clientKey: tls.clientKey, ...(tls.ca ? { ca: tls.ca } : {}) };
  return { tls: showTls(tidy), tlsSealed: cipher.encrypt(JSON.stringify(tidy), boundTo(webhookId, 'tls')) };
}

/**
 * The endpoint's credentials opened for sending; undefined when it has none. Throws when the key
 * cannot open them.
 */
export function openAccess(
  cipher: Pick<SecretCipher, 'decrypt'>,
  webhookId: string,
  sealed: Pick<StoredCredentials, 'authSealed' | 'tlsSealed'>,
): ReceiverAccess | undefined {
  if (!sealed.authSealed && !sealed.tlsSealed) return undefined;
  const authJson = sealed.authSealed ? cipher.decrypt(sealed.authSealed, boundTo(webhookId, 'auth')) : '';
  const tlsJson = sealed.tlsSealed ? cipher.decrypt(sealed.tlsSealed, boundTo(webhookId, 'tls')) : '';
  const version = createHash('sha256').update(`${authJson}\n${tlsJson}`).digest('base64url').slice(0, 22);
  return {
    endpointId: webhookId,
    version,
    ...(authJson ? { auth: JSON.parse(authJson) as ReceiverAuth } : {}),
    ...(tlsJson ? { tls: JSON.parse(tlsJson) as ClientTls } : {}),
  };
}

/** The Authorization header of basic and bearer auth (oauth2's comes from its token). */
export function staticAuthorization(auth: ReceiverAuth): string | undefined {
  if (auth.type === 'basic') return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`;
  if (auth.type === 'bearer') return `Bearer ${auth.token}`;
  return undefined;
}
