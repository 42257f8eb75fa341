import type { Scope } from './scopes';

/** What a portal session may do: `read` always, `manage` to change its endpoints as well. */
export const PORTAL_CAPABILITIES = ['read', 'manage'] as const;
export type PortalCapability = (typeof PORTAL_CAPABILITIES)[number];

/** How the dashboard of a portal session presents itself. */
export interface PortalBranding {
  name?: string;
  /** `#rrggbb`. */
  accentColor?: string;
  /** An https:// image. */
  logoUrl?: string;
}

/**
 * The scopes a session's capabilities stand for. A session never holds more: no publishing, no
 * API keys, no stores, no portal sessions.
 */
export function scopesOfCapabilities(capabilities: readonly PortalCapability[]): Scope[] {
  return capabilities.includes('manage') ? ['webhooks:read', 'webhooks:write'] : ['webhooks:read'];
}

/** Every scope a session can hold: a route requiring only these accepts a session's token. */
export const PORTAL_SESSION_SCOPES: readonly Scope[] = scopesOfCapabilities(['read', 'manage']);
