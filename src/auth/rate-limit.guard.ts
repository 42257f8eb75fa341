import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import { AppConfig } from '../config/app-config';
import type { AuthenticatedRequest } from './auth-context';
import { PUBLIC_ROUTE } from '../common/public.decorator';
import { RequestAuthenticator } from './request-authenticator';

/** The window of RATE_LIMIT_PER_MINUTE. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * The 429's sentence, naming what was counted: the API key, or (for requests without a valid key,
 * counted by {@link RateLimitGuard.getTracker} as `ip:<address>`) the client's IP address.
 */
export function rateLimitMessage(limit: number, tracker: string, retryInSeconds: number): string {
  const per = tracker.startsWith('ip:')
    ? 'per client IP address for requests without a valid API key'
    : tracker.startsWith('session:')
      ? 'per portal session'
      : 'per API key';
  return `Rate limit exceeded: at most ${limit} requests a minute ${per}; retry in ${retryInSeconds} s (Retry-After)`;
}

/**
 * Global guard, registered before {@link ApiKeyGuard}: RATE_LIMIT_PER_MINUTE requests a minute
 * per API key over all routes together, then 429 with Retry-After. A request without
 * a valid key counts against its client IP instead, so that a flood of made-up keys is limited
 * too. Public routes (health, metrics, the
 * dashboard's files) are not limited: a load balancer must never read a 429 as "down". Counters
 * live in the process (per process limits; @nestjs/throttler's in-memory storage).
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly config: AppConfig,
    private readonly authenticator: RequestAuthenticator,
  ) {
    super(options, storage, reflector);
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    if (this.config.rateLimitPerMinute === 0) return true;
    return this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()]) === true;
  }

  /**
   * `key:<id>` for a valid key (verified keys are cached, so this costs no query), `session:<id>`
   * for a portal session, else `ip:<address>`.
   */
  protected override async getTracker(req: AuthenticatedRequest): Promise<string> {
    const { context } = await this.authenticator.authenticate(req);
    if (context) return `${context.portal ? 'session' : 'key'}:${context.keyId}`;
    return `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
  }

  /** One counter per tracker for all routes together (the default keeps one per route). */
  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `${name}:${tracker}`;
  }
}
