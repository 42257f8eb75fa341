import { Agent } from 'undici';
import { signatureHeaders, signingSecret, type SigningSecret } from '../../src/dispatch/sending/signature';

/** Both signature sets, as Hookline sends them by default (SIGNATURE_HEADERS=seed,standard). */
const BOTH_SETS = { seed: true, standard: true };
const USER_AGENT = 'Hookline-Webhook/1.0 (+http://localhost:3000/docs)';

export interface SignedSenderOptions {
  /** Sockets per origin (Hookline's ENDPOINT_CONCURRENCY caps what one endpoint gets). */
  connectionsPerOrigin: number;
  timeoutMs: number;
}

/**
 * What the job-queue contenders send with: the request Hookline's WebhookSender sends (undici's
 * `dispatch` on one keep-alive Agent with its options, both signature sets computed per attempt,
 * the answer's status kept and its body discarded), so that only the queue differs.
 */
export class SignedSender {
  private readonly agent: Agent;
  private readonly targets: Array<{ origin: string; path: string }>;
  private readonly secrets: SigningSecret[];

  constructor(urls: string[], secrets: string[], options: SignedSenderOptions) {
    this.targets = urls.map((url) => {
      const parsed = new URL(url);
      return { origin: parsed.origin, path: parsed.pathname };
    });
    this.secrets = secrets.map(signingSecret);
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: options.timeoutMs },
    });
  }

  /** One signed POST to endpoint `endpoint`; resolves with the status (0 when the request failed). */
  send(endpoint: number, eventId: string, body: string): Promise<number> {
    const { origin, path } = this.targets[endpoint];
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signatureHeaders(BOTH_SETS, eventId, body, this.secrets[endpoint], undefined, Date.now()),
    };
    return new Promise<number>((resolve) => {
      let status = 0;
      this.agent.dispatch(
        { origin, path, method: 'POST', headers, body },
        {
          onRequestStart: () => undefined,
          onResponseStart: (_controller, statusCode) => void (status = statusCode),
          onResponseData: () => undefined,
          onResponseEnd: () => resolve(status),
          onResponseError: () => resolve(0),
        },
      );
    });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
