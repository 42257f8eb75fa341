import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { PgNotifier } from '../database/pg-notifier';
import { ApiKeyRepository } from './api-key.repository';
import { hashApiKey } from './api-key-text';
import type { AuthContext } from './auth-context';

/** Channel on which a revocation reaches every process. */
export const API_KEY_REVOKED_CHANNEL = 'hookline_api_key_revoked';

const CACHE_TTL_MS = 30_000;
const CACHE_MAX_ENTRIES = 10_000;
const TOUCH_INTERVAL_MS = 60_000;

interface CacheEntry {
  context: AuthContext;
  expiresAt: number;
}

/**
 * Turns an X-API-Key into the caller's {@link AuthContext}. Verified keys are cached briefly so
 * that an API request costs one query, not two; a revocation evicts the key at once in every
 * process (LISTEN/NOTIFY), and the short TTL bounds what a lost notification could leave behind.
 * `lastUsedAt` is written at most once a minute per key, not on every request.
 */
@Injectable()
export class ApiKeyAuthenticator implements OnModuleInit {
  private readonly logger = new Logger(ApiKeyAuthenticator.name);
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastTouched = new Map<string, number>();
  private evictions = 0;

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly notifier: PgNotifier,
  ) {}

  onModuleInit(): void {
    this.notifier.listen(API_KEY_REVOKED_CHANNEL, (keyId) => this.evict(keyId));
    this.notifier.onReconnect(() => this.cache.clear());
  }

  async authenticate(keyText: string): Promise<AuthContext | undefined> {
    const hash = hashApiKey(keyText);
    const now = Date.now();
    let context = this.cached(hash, now);
    if (!context) {
      const evictionsBefore = this.evictions;
      const key = await this.keys.findByHash(hash);
      if (!key) return undefined;
      context = { keyId: key.id, storeId: key.storeId, scopes: key.scopes };
      // A revocation that landed while we read the row must not be undone by caching what we read.
      if (this.evictions === evictionsBefore) {
        if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
        this.cache.set(hash, { context, expiresAt: now + CACHE_TTL_MS });
      }
    }
    this.touch(context.keyId, now);
    return context;
  }

  /** Forgets a key in this process (the revoking request also notifies the others). */
  evict(keyId: string): void {
    this.evictions++;
    for (const [hash, entry] of this.cache) if (entry.context.keyId === keyId) this.cache.delete(hash);
    this.lastTouched.delete(keyId);
  }

  private cached(hash: string, now: number): AuthContext | undefined {
    const entry = this.cache.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.context;
    this.cache.delete(hash);
    return undefined;
  }

  private touch(keyId: string, now: number): void {
    const last = this.lastTouched.get(keyId);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(keyId, now);
    // On failure (database away) the next try is a minute later too: not a warning per request.
    this.keys.touch(keyId, new Date(now)).catch((error: unknown) => {
      this.logger.warn(`could not record lastUsedAt of ${keyId}: ${String(error)}`);
    });
  }
}
