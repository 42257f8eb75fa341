import type { Dispatcher } from 'undici';
import { staticAuthorization, type ClientTls, type ReceiverAccess } from '../../webhooks/receiver-credentials';
import type { UrlPolicy } from '../../webhooks/url-policy';
import type { DeadlineSignal } from './attempt-deadlines';
import { ClientTlsAgents } from './client-tls-agents';
import { OAuth2TokenCache } from './oauth2-token-cache';
import { OAuth2TokenError, requestToken } from './oauth2-token-request';

type Agent = Pick<Dispatcher, 'dispatch' | 'close' | 'destroy'>;

/**
 * What an attempt adds to prove Hookline to its receiver (docs/receivers.md): the Authorization
 * header of basic, bearer or OAuth2 auth, and the connection pool that presents the endpoint's
 * client certificate. Token requests go through `tokenDispatcher`, one place to route them.
 */
export class ReceiverAuthenticator {
  private readonly tokens: OAuth2TokenCache;
  private readonly agents: ClientTlsAgents<Agent>;

  constructor(
    tokenDispatcher: Dispatcher,
    urlPolicy: Pick<UrlPolicy, 'assertAddressAllowed'>,
    timeoutMs: number,
    createAgent: (tls: ClientTls) => Agent,
    tokens?: OAuth2TokenCache,
  ) {
    this.tokens =
      tokens ??
      new OAuth2TokenCache((access) => {
        if (access.auth?.type !== 'oauth2') throw new OAuth2TokenError('the endpoint has no oauth2 auth');
        return requestToken(tokenDispatcher, urlPolicy, access.auth, timeoutMs);
      });
    this.agents = new ClientTlsAgents(createAgent);
  }

  /** The endpoint's own pool when it presents a client certificate; `shared` otherwise. */
  dispatcherFor<T extends Agent>(access: ReceiverAccess | undefined, shared: T): Agent {
    return access?.tls ? this.agents.agentFor(access as ReceiverAccess & { tls: ClientTls }) : shared;
  }

  /** The Authorization header to send, if the endpoint has auth; an OAuth2TokenError when no token can be had in time. */
  async authorization(access: ReceiverAccess | undefined, signal: DeadlineSignal): Promise<string | undefined> {
    const auth = access?.auth;
    if (!auth) return undefined;
    if (auth.type !== 'oauth2') return staticAuthorization(auth);
    return `Bearer ${await this.withinDeadline(this.tokens.token(access), signal)}`;
  }

  /**
   * The receiver answered 401 to `sent`: with OAuth2, the token is dropped and a new one fetched,
   * for one more try within the same attempt; undefined when another try would send the same.
   */
  async afterRefusal(access: ReceiverAccess | undefined, sent: string | undefined, signal: DeadlineSignal): Promise<string | undefined> {
    if (access?.auth?.type !== 'oauth2' || sent === undefined) return undefined;
    this.tokens.refused(access, sent.slice('Bearer '.length));
    return this.authorization(access, signal);
  }

  async destroy(): Promise<void> {
    await this.agents.destroyAll();
  }

  /** The token, or a clear failure when the attempt's time is up first (the request itself goes on for the others). */
  private withinDeadline<T>(pending: Promise<T>, signal: DeadlineSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(new OAuth2TokenError("no token before the attempt's time limit"));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(new OAuth2TokenError("no token before the attempt's time limit"));
      signal.once('abort', onAbort);
      pending.then(resolve, reject).finally(() => signal.off('abort', onAbort));
    });
  }
}
