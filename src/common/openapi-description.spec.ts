import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { runInThisContext } from 'node:vm';
import { loadConfig } from '../config/app-config';
import { signPayload } from '../dispatch/sending/signature';
import { openApiDescription } from './openapi-description';

const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTAxMjM=';
const BODY = '{"id":"evt_1","type":"order.created","timestamp":"2026-11-25T10:00:00.000Z","data":{"note":"café"}}';

function codeBlock(description: string, language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(description);
  if (!match) throw new Error(`no ${language} block`);
  return match[1];
}

type Verify = (secret: string, headers: Record<string, string>, rawBody: Buffer) => unknown;

/** The Node recipe of the description, run as an integrator would paste it. */
function nodeRecipe(description: string): Verify {
  const code = codeBlock(description, 'js');
  const wrapped = runInThisContext(`(function (require) {\n${code}\nreturn verifyWebhook;\n})`) as (require: NodeJS.Require) => Verify;
  return wrapped(createRequire(__filename));
}

function headersFor(timestamp: string, body = BODY, secret = SECRET): Record<string, string> {
  return { 'x-webhook-timestamp': timestamp, 'x-webhook-signature': signPayload(secret, timestamp, body) };
}

describe('openApiDescription', () => {
  const config = loadConfig({ NODE_ENV: 'test', SERVICE_NAME: 'Relay', DOCS_URL: 'https://hooks.example.com/docs' });
  const description = openApiDescription(config);

  it("states this deployment's User-Agent, time limit and retry schedule", () => {
    expect(description).toContain('Every path is relative to the server URL, `/api/v1/external`.');
    expect(description).toContain('`Relay-Webhook/1.0 (+https://hooks.example.com/docs)`');
    expect(description).toContain('within 10 s acknowledges');
    expect(description).toContain('3 attempts (attempt 2 about 1 s after attempt 1 failed, attempt 3 about 4 s after attempt 2 failed)');
    const custom = openApiDescription(loadConfig({ NODE_ENV: 'test', RETRY_SCHEDULE_MS: '0,1500', DELIVERY_TIMEOUT_MS: '2500' }));
    expect(custom).toContain('within 2500 ms acknowledges');
    expect(custom).toContain('2 attempts (attempt 2 about 1500 ms after attempt 1 failed)');
  });

  it('describes the signature sets this deployment sends, Retry-After and 410', () => {
    expect(description).toContain('| `webhook-signature` | `v1,` + base64 HMAC-SHA256');
    expect(description).toContain('| `X-Webhook-Signature` | `sha256=`');
    expect(description).toContain('new Webhook(secret).verify(rawBody, headers)');
    expect(description).toContain('A 429 or 503 with `Retry-After`');
    expect(description).toContain('A 410 Gone ends the delivery at once and disables the endpoint');
    expect(description).toContain('spread by up to ±10 %');
    const standardOnly = openApiDescription(loadConfig({ NODE_ENV: 'test', SIGNATURE_HEADERS: 'standard' }));
    expect(standardOnly).toContain('| `webhook-signature` |');
    expect(standardOnly).not.toContain('| `X-Webhook-Signature` |');
  });

  describe('its Node.js recipe', () => {
    const verify = nodeRecipe(description);

    it('accepts a delivery signed as Hookline signs it and returns the envelope', () => {
      const timestamp = String(Date.now());
      expect(verify(SECRET, headersFor(timestamp), Buffer.from(BODY))).toEqual(JSON.parse(BODY));
    });

    it('refuses a changed body, another secret, a stale timestamp and missing headers', () => {
      const timestamp = String(Date.now());
      expect(verify(SECRET, headersFor(timestamp), Buffer.from(BODY.replace('café', 'cafe')))).toBeNull();
      expect(verify(SECRET, headersFor(timestamp, BODY, `${SECRET}x`), Buffer.from(BODY))).toBeNull();
      const stale = String(Date.now() - 6 * 60_000);
      expect(verify(SECRET, headersFor(stale), Buffer.from(BODY))).toBeNull();
      expect(verify(SECRET, {}, Buffer.from(BODY))).toBeNull();
    });
  });

  describe('its Python recipe', () => {
    const python = codeBlock(description, 'python');
    const run = (timestamp: string, signature: string, body: string): string =>
      execFileSync(
        'python3',
        [
          '-c',
          `${python}\nimport sys\nprint(verify_webhook(sys.argv[1], {"X-Webhook-Timestamp": sys.argv[2], "X-Webhook-Signature": sys.argv[3]}, sys.argv[4].encode()))`,
          SECRET,
          timestamp,
          signature,
          body,
        ],
        { encoding: 'utf8' },
      ).trim();
    let hasPython = true;
    try {
      execFileSync('python3', ['--version']);
    } catch {
      hasPython = false;
    }

    (hasPython ? it : it.skip)('accepts a delivery signed as Hookline signs it, and refuses a changed body or a stale timestamp', () => {
      const timestamp = String(Date.now());
      const signature = signPayload(SECRET, timestamp, BODY);
      expect(run(timestamp, signature, BODY)).toMatch(/^\{'id': 'evt_1'/);
      expect(run(timestamp, signature, BODY.replace('café', 'cafe'))).toBe('None');
      const stale = String(Date.now() - 6 * 60_000);
      expect(run(stale, signPayload(SECRET, stale, BODY), BODY)).toBe('None');
    });
  });
});
