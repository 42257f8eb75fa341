import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { ErrorResponse, paths } from './generated/openapi';

export type * from './generated/openapi';
export { verifyWebhook, WebhookVerificationError } from './generated/verify-webhook';
export type { VerificationFailure, VerifyOptions, WebhookEnvelope } from './generated/verify-webhook';

/** Where a deployment serves the API; every path of `paths` is relative to it. */
export const API_PATH = '/api/v1/external';

/** One method per HTTP verb (`GET`, `POST`, `PUT`, `DELETE`), each typed by the route's path. */
export type HooklineClient = Client<paths>;

interface CommonOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** The deployment's origin, e.g. `https://hookline.example.com` (the API's path is added unless given). */
  baseUrl: string;
  /** Further headers for every request. */
  headers?: Record<string, string>;
}

/** A client authenticates with an API key, or with a portal session's token: one of the two. */
export type HooklineClientOptions = CommonOptions &
  (
    | {
        /** Sent as `X-API-Key` on every request. */
        apiKey: string;
        portalToken?: never;
      }
    | {
        /** A portal session's token (`POST /portal-sessions`), sent as `Authorization: Bearer`: the session's store and capabilities. */
        portalToken: string;
        apiKey?: never;
      }
  );

/**
 * A client of one deployment's API. Each call resolves to `{ data, error, response }`: `data` on a
 * 2xx, otherwise `error`, the API's JSON error; pass the call to `unwrap` to get `data` or a
 * thrown `HooklineApiError` instead.
 */
export function createHooklineClient({ baseUrl, apiKey, portalToken, headers, ...options }: HooklineClientOptions): HooklineClient {
  const credential: Record<string, string> =
    portalToken !== undefined ? { Authorization: `Bearer ${portalToken}` } : { 'X-API-Key': apiKey };
  return createClient<paths>({ ...options, baseUrl: apiUrl(baseUrl), headers: { ...headers, ...credential } });
}

function apiUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith(API_PATH) ? trimmed : `${trimmed}${API_PATH}`;
}

/** A call that the API answered with a status outside 2xx. */
export class HooklineApiError extends Error {
  /** The HTTP status, e.g. 400. */
  readonly status: number;
  /** The API's JSON error (`{statusCode, error, message}`), or its text when it was not JSON. */
  readonly body: ErrorResponse | string;

  constructor(
    readonly response: Response,
    body: unknown,
  ) {
    const messages = HooklineApiError.messagesOf(body);
    super(`${response.status} ${response.statusText}${messages.length ? `: ${messages.join('; ')}` : ''}`);
    this.name = 'HooklineApiError';
    this.status = response.status;
    this.body = isErrorResponse(body) ? body : typeof body === 'string' ? body : JSON.stringify(body);
  }

  /** One sentence per problem (a validation error lists one for each field it refused). */
  get messages(): string[] {
    return HooklineApiError.messagesOf(this.body);
  }

  private static messagesOf(body: unknown): string[] {
    if (isErrorResponse(body)) return Array.isArray(body.message) ? body.message : [body.message];
    return typeof body === 'string' && body ? [body] : [];
  }
}

function isErrorResponse(body: unknown): body is ErrorResponse {
  return typeof body === 'object' && body !== null && 'statusCode' in body && 'message' in body;
}

type Settled = { data?: unknown; error?: unknown; response: Response };
type Data<R> = R extends { data: infer D } ? D : never;

/**
 * The data of a call that succeeded; a call that did not throws `HooklineApiError`.
 * `await unwrap(hookline.POST('/events', { body }))`
 */
export async function unwrap<R extends Settled>(call: Promise<R> | R): Promise<[Data<R>] extends [never] ? undefined : Data<R>> {
  const { data, error, response } = await call;
  if (!response.ok) throw new HooklineApiError(response, error);
  return data as [Data<R>] extends [never] ? undefined : Data<R>;
}
