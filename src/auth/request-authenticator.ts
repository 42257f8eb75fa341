import { Injectable } from '@nestjs/common';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { PortalSessionAuthenticator, type Authentication } from './portal-session-authenticator';
import { credentialOf } from './request-credentials';

type RequestLike = { headers: Record<string, string | string[] | undefined> };

/**
 * Authenticates a request by whichever credential it carries (`credentialOf`): an API key, a
 * portal session's token, or a browser's portal session cookie. Once per request, for all the
 * guards that ask (the rate limit counts by caller, then the API key guard checks scopes).
 */
@Injectable()
export class RequestAuthenticator {
  private readonly byRequest = new WeakMap<object, Promise<Authentication>>();

  constructor(
    private readonly keys: ApiKeyAuthenticator,
    private readonly sessions: PortalSessionAuthenticator,
  ) {}

  authenticate(request: RequestLike): Promise<Authentication> {
    let result = this.byRequest.get(request);
    if (!result) {
      result = this.lookUp(request);
      this.byRequest.set(request, result);
    }
    return result;
  }

  private async lookUp(request: RequestLike): Promise<Authentication> {
    const credential = credentialOf(request.headers);
    switch (credential.kind) {
      case 'api-key': {
        const context = credential.key ? await this.keys.authenticate(credential.key) : undefined;
        return context ? { context } : { refusal: 'Invalid API key' };
      }
      case 'bearer':
        return this.sessions.byToken(credential.token);
      case 'cookie':
        return this.sessions.byCookie(credential.sessionId, credential.secret);
      case 'none':
        return { refusal: 'Missing X-API-Key header' };
    }
  }
}
