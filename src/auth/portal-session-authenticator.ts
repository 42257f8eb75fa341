import { Injectable } from '@nestjs/common';
import type { AuthContext } from './auth-context';
import { scopesOfCapabilities } from './portal-capabilities';
import { csrfTokenFor, hashPortalSecret } from './portal-secrets';
import { PortalSessionRepository, type PortalSessionState } from './portal-session.repository';

/** A request's credential, accepted (the caller's context) or refused (the 401's sentence). */
export type Authentication = { context: AuthContext; refusal?: undefined } | { context?: undefined; refusal: string };

const NOT_SIGNED_IN = 'This browser is not signed in to this portal session, or the session has ended: open a new portal link';

/**
 * Turns a portal session's token or a browser's session cookie into the caller's
 * {@link AuthContext}. Every request reads the session's row (one lookup by a unique hash), with no
 * cache: a revocation ends the session at once in every process, and portal traffic is one
 * person's dashboard, not an integration's load.
 */
@Injectable()
export class PortalSessionAuthenticator {
  constructor(private readonly sessions: PortalSessionRepository) {}

  async byToken(token: string): Promise<Authentication> {
    const session = token ? await this.sessions.findByToken(hashPortalSecret(token)) : undefined;
    if (!session) return { refusal: 'Invalid portal session token' };
    return admit(session, { via: 'token' });
  }

  /** The session `sessionId` if `secret` is the cookie its link's code was exchanged for. */
  async byCookie(sessionId: string, secret: string | undefined): Promise<Authentication> {
    const session = sessionId && secret ? await this.sessions.findByCookie(sessionId, hashPortalSecret(secret)) : undefined;
    if (!session || !secret) return { refusal: NOT_SIGNED_IN };
    return admit(session, { via: 'cookie', csrfToken: csrfTokenFor(secret) });
  }
}

function admit(session: PortalSessionState, how: { via: 'token' | 'cookie'; csrfToken?: string }): Authentication {
  if (session.ended === 'revoked') return { refusal: 'This portal session has been ended: ask for a new link' };
  if (session.ended === 'expired')
    return { refusal: `This portal session expired at ${session.expiresAt.toISOString()}: ask for a new link` };
  return {
    context: {
      keyId: session.id,
      storeId: session.storeId,
      scopes: scopesOfCapabilities(session.capabilities),
      portal: {
        ...how,
        capabilities: session.capabilities,
        webhookIds: session.webhookIds,
        branding: session.branding,
        expiresAt: session.expiresAt,
      },
    },
  };
}
