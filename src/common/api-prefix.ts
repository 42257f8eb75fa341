import type { INestApplication } from '@nestjs/common';

/** The management API's prefix. */
export const API_PREFIX = 'api/v1/external';

/**
 * Routes served without the prefix (and, for a client that takes every path as relative to the
 * prefix, also under it): readiness, metrics, the API documentation and the dashboard.
 */
export const UNPREFIXED_ROUTES = ['health', 'metrics', 'dashboard', 'dashboard/{*path}'];

/** How the prefix is applied (`app.setGlobalPrefix(API_PREFIX, PREFIX_OPTIONS)`): the routes above also without it. */
export const PREFIX_OPTIONS: Parameters<INestApplication['setGlobalPrefix']>[1] = {
  exclude: UNPREFIXED_ROUTES.flatMap((path) => [path, `${API_PREFIX}/${path}`]),
};
