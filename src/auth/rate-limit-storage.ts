import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

interface Window {
  startedAt: number;
  hits: number;
  blockedUntil: number;
}

const SWEEP_INTERVAL_MS = 60_000;

/**
 * A fixed-window counter per key: O(1) a request. @nestjs/throttler 6.7's in-memory storage keeps
 * the expiry time of every hit of the window and filters that list on each request, so its cost
 * grows with RATE_LIMIT_PER_MINUTE (and without blocking it spreads the list into Math.min, which
 * throws past about 125,000 hits). A fixed window lets a client send up to twice
 * the limit across a window boundary, which is the usual price of this shape.
 */
export class FixedWindowThrottlerStorage implements ThrottlerStorage {
  private readonly windows = new Map<string, Window>();
  constructor() {
    setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number): Promise<ThrottlerStorageRecord> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || (now - window.startedAt >= ttl && now >= window.blockedUntil)) {
      window = { startedAt: now, hits: 0, blockedUntil: 0 };
      this.windows.set(key, window);
    }
    if (now >= window.blockedUntil) {
      window.hits++;
      if (window.hits > limit) window.blockedUntil = now + (blockDuration > 0 ? blockDuration : window.startedAt + ttl - now);
    }
    const isBlocked = now < window.blockedUntil;
    return {
      totalHits: window.hits,
      timeToExpire: Math.max(0, Math.ceil((window.startedAt + ttl - now) / 1000)),
      isBlocked,
      timeToBlockExpire: isBlocked ? Math.max(1, Math.ceil((window.blockedUntil - now) / 1000)) : 0,
    };
  }

  /** Forgets windows that ended (a key seen once does not stay in memory). */
  private sweep(now = Date.now()): void {
    for (const [key, window] of this.windows) {
      if (now - window.startedAt >= SWEEP_INTERVAL_MS * 2 && now >= window.blockedUntil) this.windows.delete(key);
    }
  }
}
