import { API_PREFIX } from '../common/api-prefix';
import type { AppConfig } from '../config/app-config';
import { PORTAL_COOKIE_PREFIX } from './request-credentials';

export interface PortalCookiePolicy {
  secure: boolean;
  /** The dashboard may be framed by other sites (PORTAL_FRAME_ANCESTORS), so the cookie must go with cross-site requests. */
  crossSite: boolean;
}

/**
 * Secure outside development (where the dashboard may be reached over plain http:// by another
 * name than localhost). SameSite=Strict unless the dashboard may be framed by another site: a
 * frame's requests are cross-site there, so the cookie is SameSite=None (which browsers accept only
 * Secure) and Partitioned, kept apart per embedding site (CHIPS), so browsers that block
 * third-party cookies keep it too.
 */
export function portalCookiePolicy(config: Pick<AppConfig, 'nodeEnv' | 'portalFrameAncestors'>): PortalCookiePolicy {
  const crossSite = config.portalFrameAncestors.length > 0;
  return { secure: crossSite || config.nodeEnv !== 'development', crossSite };
}

/**
 * The Set-Cookie value that signs a browser in to one portal session: HttpOnly (no script reads
 * it), sent only to the API, for as long as the session lasts. Each session has its own cookie, so
 * two sessions open in one browser (two stores, say) never take each other's place.
 */
export function portalCookie(sessionId: string, secret: string, maxAgeSeconds: number, policy: PortalCookiePolicy): string {
  return [
    `${PORTAL_COOKIE_PREFIX}${sessionId}=${secret}`,
    `Path=/${API_PREFIX}`,
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    'HttpOnly',
    ...(policy.secure ? ['Secure'] : []),
    policy.crossSite ? 'SameSite=None' : 'SameSite=Strict',
    ...(policy.crossSite ? ['Partitioned'] : []),
  ].join('; ');
}
