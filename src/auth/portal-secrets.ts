import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The three secrets of a portal session, each 32 random bytes: its API token (`hlp_…`), the
 * one-time code of its link, and the value of the cookie a browser gets for that code. Each is
 * shown once and stored only as its SHA-256 hash, as API keys are (no dictionary to attack).
 */
export function generatePortalToken(): string {
  return `hlp_${randomBytes(32).toString('base64url')}`;
}

export function generatePortalCode(): string {
  return randomBytes(32).toString('base64url');
}

export function generateCookieSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function hashPortalSecret(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The CSRF token of a browser's session, derived from its cookie: only a page that could read the
 * session's own answers (GET /me, the code's exchange) knows it, a cross-site page cannot, and
 * nothing more is stored.
 */
export function csrfTokenFor(cookieSecret: string): string {
  return createHash('sha256').update(`hookline-csrf:${cookieSecret}`, 'utf8').digest('base64url');
}

/** Compares two secrets in a time that does not depend on where they differ. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
