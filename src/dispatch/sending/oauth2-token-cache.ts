import { LRUCache } from 'lru-cache';
import type { ReceiverAccess } from '../../webhooks/receiver-credentials';
import { ENDPOINT_CACHE_ENTRIES } from './endpoint-cache-size';

/** An access token and how long its server said it lasts. */
export interface IssuedToken {
  accessToken: string;
  /** Seconds, from the token answer's `expires_in`; undefined when it gave none. */
  expiresIn?: number;
}

/** A token whose answer gave no lifetime is kept this long (a 401 still replaces it sooner). */
const DEFAULT_LIFETIME_MS = 60 * 60 * 1000;
/** Renewed this long before it expires, at most (a tenth of its lifetime when that is shorter), so none is sent as it dies. */
const RENEWAL_MARGIN_MS = 60_000;
/** A failed token request answers the deliveries of the next moment too, so a refusing token server is not hammered. */
const FAILURE_HOLD_MS = 2_000;

interface Entry {
  version: string;
  token?: { value: string; renewAt: number };
  pending?: Promise<string>;
  failure?: { error: Error; until: number };
}

/**
 * OAuth2 access tokens by endpoint: fetched once and shared by every attempt running meanwhile
 * (single flight), kept until shortly before `expires_in`, and dropped when the receiver answers
 * 401 to one, so that the next asker fetches a new one (once, whoever asks). An entry lasts while
 * the endpoint's credentials keep their version.
 */
export class OAuth2TokenCache {
  private readonly entries: LRUCache<string, Entry>;

  constructor(
    private readonly fetchToken: (access: ReceiverAccess) => Promise<IssuedToken>,
    private readonly now: () => number = Date.now,
    private readonly failureHoldMs = FAILURE_HOLD_MS,
    capacity = ENDPOINT_CACHE_ENTRIES,
  ) {
    this.entries = new LRUCache({ max: capacity });
  }

  /** A token for the endpoint: the cached one while it lasts, else the one being fetched, else a new fetch. */
  token(access: ReceiverAccess): Promise<string> {
    const entry = this.entryOf(access);
    const now = this.now();
    if (entry.token && now < entry.token.renewAt) return Promise.resolve(entry.token.value);
    if (entry.pending) return entry.pending;
    if (entry.failure && now < entry.failure.until) return Promise.reject(entry.failure.error);
    const pending = this.fetchToken(access).then(
      (issued) => {
        const lifetimeMs = issued.expiresIn === undefined ? DEFAULT_LIFETIME_MS : issued.expiresIn * 1000;
        const margin = Math.min(RENEWAL_MARGIN_MS, lifetimeMs / 10);
        entry.token = { value: issued.accessToken, renewAt: this.now() + lifetimeMs - margin };
        entry.pending = undefined;
        entry.failure = undefined;
        return issued.accessToken;
      },
      (error: unknown) => {
        entry.pending = undefined;
        const failure = error instanceof Error ? error : new Error(String(error));
        entry.failure = { error: failure, until: this.now() + this.failureHoldMs };
        throw failure;
      },
    );
    entry.pending = pending;
    entry.token = undefined;
    return pending;
  }

  /**
   * The receiver refused `token` (401): forget it, unless a newer one has replaced it already, so
   * that many attempts refused at once lead to one new token request.
   */
  refused(access: ReceiverAccess, token: string): void {
    const entry = this.entries.get(access.endpointId);
    if (entry?.version === access.version && entry.token?.value === token) entry.token = undefined;
  }

  private entryOf(access: ReceiverAccess): Entry {
    let entry = this.entries.get(access.endpointId);
    if (entry === undefined || entry.version !== access.version) {
      // Bounded: deleted endpoints' tokens do not stay in memory for good.
      entry = { version: access.version };
      this.entries.set(access.endpointId, entry);
    }
    return entry;
  }
}
