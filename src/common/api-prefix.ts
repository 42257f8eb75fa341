/** The management API's prefix. */
export const API_PREFIX = 'api/v1/external';

/**
 * Routes served without the prefix (and, for a client that takes every path as relative to the
 * prefix, also under it): readiness, metrics, the API documentation and the dashboard.
 */
export const UNPREFIXED_ROUTES = ['health', 'metrics', 'dashboard', 'dashboard/{*path}'];
