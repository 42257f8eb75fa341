import { SetMetadata } from '@nestjs/common';

export const SESSION_ENDPOINTS = 'hookline:session-endpoints';

/**
 * How a route serves a portal session limited to some endpoints (`webhookIds`):
 *
 * - `{ param: 'id' }`: it acts on the endpoint named by that path parameter; the guard answers
 *   any other endpoint 404, as for an id that does not exist;
 * - `'narrowed'`: its handler answers only what concerns the session's endpoints (it reads
 *   `endpointLimit(auth)`);
 * - `'unrelated'`: it concerns no endpoint (the event catalogue, GET /me).
 *
 * A route without it refuses such a session (403), so a route added later cannot show one
 * endpoint's data to a session limited to another by forgetting to narrow.
 */
export type SessionEndpointsRule = { param: string } | 'narrowed' | 'unrelated';

export const SessionEndpoints = (rule: SessionEndpointsRule): MethodDecorator & ClassDecorator => SetMetadata(SESSION_ENDPOINTS, rule);
