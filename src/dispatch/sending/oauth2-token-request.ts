import { request, type Dispatcher } from 'undici';
import type { ReceiverAuth } from '../../webhooks/receiver-credentials';
import type { UrlPolicy } from '../../webhooks/url-policy';
import type { IssuedToken } from './oauth2-token-cache';

/** The most of a token answer read: a token is a few KiB at most. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Why no token could be had; its message is the attempt's error, as it is. */
export class OAuth2TokenError extends Error {
  override readonly name = 'OAuth2TokenError';

  constructor(reason: string) {
    super(`OAuth2 token request failed: ${reason}`);
  }
}

type OAuth2Auth = Extract<ReceiverAuth, { type: 'oauth2' }>;

/**
 * One client-credentials token request (RFC 6749 §4.4): a form POST to the token URL, the client
 * authenticated with HTTP Basic (§2.3.1, the method every server must accept), through
 * `dispatcher`, whose connections pass the URL policy as deliveries' do. Redirects are not
 * followed. Every way it can fail becomes an {@link OAuth2TokenError} that says why.
 */
export async function requestToken(
  dispatcher: Dispatcher,
  urlPolicy: Pick<UrlPolicy, 'assertAddressAllowed'>,
  auth: OAuth2Auth,
  timeoutMs: number,
): Promise<IssuedToken> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (auth.scope) form.set('scope', auth.scope);
  if (auth.audience) form.set('audience', auth.audience);
  // §2.3.1: the id and secret are form-encoded before they are joined for Basic.
  const client = `${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`;
  let answer: Dispatcher.ResponseData;
  try {
    // net.connect never calls the policy's `lookup` for an IP literal, so literals are checked here.
    urlPolicy.assertAddressAllowed(new URL(auth.tokenUrl).hostname);
    answer = await request(auth.tokenUrl, {
      dispatcher,
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(client).toString('base64')}`,
      },
      body: form.toString(),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new OAuth2TokenError(`${describe(error, timeoutMs)} (token URL)`);
  }
  const text = await readAtMost(answer.body, MAX_ANSWER_BYTES).catch((error: unknown) => {
    throw new OAuth2TokenError(`${describe(error, timeoutMs)} while reading the token URL's answer`);
  });
  const json = parseObject(text);
  if (answer.statusCode < 200 || answer.statusCode > 299) {
    // RFC 6749 §5.2: `error` names the reason (invalid_client, invalid_scope…).
    const code = typeof json?.error === 'string' ? ` (${json.error.slice(0, 100)})` : '';
    throw new OAuth2TokenError(`HTTP ${answer.statusCode} from token URL${code}`);
  }
  if (json === undefined) throw new OAuth2TokenError('the token URL did not answer JSON');
  const token = json.access_token;
  if (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token)) {
    throw new OAuth2TokenError('the token URL answered no usable access_token');
  }
  if (typeof json.token_type === 'string' && json.token_type.toLowerCase() !== 'bearer') {
    throw new OAuth2TokenError(`the token URL answered token_type ${json.token_type.slice(0, 40)}, not Bearer`);
  }
  const expiresIn = Number(json.expires_in);
  return {
    accessToken: token,
    expiresIn: json.expires_in !== undefined && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : undefined,
  };
}

async function readAtMost(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function describe(error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  if (err.name === 'TimeoutError' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'EHOSTBLOCKED' || code === 'ESELF') return `blocked: ${err.cause?.message ?? err.message}`;
  if (code === 'ENOTFOUND') return 'host not found';
  return code ? `${code}: ${err.cause?.message ?? err.message}` : String(err.message ?? error);
}
