import { Injectable } from '@nestjs/common';
import { newId } from '../common/ids';
import { AppConfig } from '../config/app-config';
import { AuthError } from './auth.errors';
import type { AuthContext, PortalContext } from './auth-context';
import type { CreatePortalSessionDto } from './dto/create-portal-session.dto';
import { PORTAL_EXPIRY_SECONDS } from './dto/create-portal-session.dto';
import type { CreatedPortalSessionResponse, PortalSessionResponse } from './dto/portal-session.response';
import { EndpointDirectory } from './endpoint-directory';
import { type PortalBranding, scopesOfCapabilities } from './portal-capabilities';
import { csrfTokenFor, generateCookieSecret, generatePortalCode, generatePortalToken, hashPortalSecret } from './portal-secrets';
import { PortalSessionRepository, type PortalSessionState } from './portal-session.repository';
import { StoreRepository } from './store.repository';

/** What an exchanged code gives: the session, and the cookie value that signs the browser in to it. */
export interface ExchangedCode {
  session: PortalSessionResponse;
  cookieSecret: string;
  /** Seconds the session has left: the cookie lasts as long. */
  maxAgeSeconds: number;
}

/**
 * Portal sessions (docs/api.md#portal-links): a store's dashboard for people without an API key,
 * opened from a link whose one-time code a browser exchanges for a cookie, with a token for the
 * platform's own code. The `portal_sessions` table is written here alone.
 */
@Injectable()
export class PortalSessionsService {
  constructor(
    private readonly config: AppConfig,
    private readonly sessions: PortalSessionRepository,
    private readonly stores: StoreRepository,
    private readonly endpoints: EndpointDirectory,
  ) {}

  /**
   * A session in `storeId`. The caller can hand out only what it may do itself: `read` needs
   * webhooks:read, `manage` webhooks:write. Every id of `webhookIds` must be an endpoint of the store.
   */
  async create(caller: AuthContext, storeId: string, dto: CreatePortalSessionDto): Promise<CreatedPortalSessionResponse> {
    const scopes = scopesOfCapabilities(dto.capabilities);
    const beyond = scopes.filter((scope) => !caller.scopes.includes(scope));
    if (beyond.length > 0) throw AuthError.scopeBeyondCaller(beyond);
    if (storeId !== caller.storeId && !(await this.stores.exists(storeId))) throw AuthError.storeNotFound(storeId);
    if (dto.webhookIds) {
      const missing = await this.endpoints.missing(storeId, dto.webhookIds);
      if (missing.length > 0) throw AuthError.portalWebhooksUnknown(storeId, missing);
    }
    await this.sessions.purgeEnded();
    const id = newId('ps');
    const token = generatePortalToken();
    const code = generatePortalCode();
    const { expiresAt } = await this.sessions.insert({
      id,
      storeId,
      capabilities: dto.capabilities.includes('manage') ? ['read', 'manage'] : ['read'],
      webhookIds: dto.webhookIds ?? null,
      branding: dto.branding ? brandingOf(dto.branding) : null,
      tokenHash: hashPortalSecret(token),
      codeHash: hashPortalSecret(code),
      expiresInSeconds: dto.expiresInSeconds ?? PORTAL_EXPIRY_SECONDS.default,
    });
    // In the fragment: browsers never send it to a server, so the code stays out of access logs and Referer headers.
    return { id, url: `${this.config.publicUrl}/dashboard#portal=${code}`, token, expiresAt: expiresAt.toISOString() };
  }

  /** Ends a session of `storeId` at once: its token and its cookie answer 401 from the next request on. */
  async revoke(storeId: string, id: string): Promise<void> {
    if (!(await this.sessions.revokeInStore(storeId, id))) throw AuthError.portalSessionNotFound(id);
  }

  /** Spends a link's one-time code: a second use, like an expired or ended session, is refused with the reason. */
  async exchange(code: string): Promise<ExchangedCode> {
    const cookieSecret = generateCookieSecret();
    const codeHash = hashPortalSecret(code);
    const session = await this.sessions.exchangeCode(codeHash, hashPortalSecret(cookieSecret));
    if (!session) {
      const found = await this.sessions.findByCode(codeHash);
      throw AuthError.portalCodeRefused(!found ? 'unknown' : found.ended === 'revoked' ? 'revoked' : found.codeUsed ? 'used' : 'expired');
    }
    return {
      session: { ...describeState(session), csrfToken: csrfTokenFor(cookieSecret) },
      cookieSecret,
      maxAgeSeconds: (session.expiresAt.getTime() - Date.now()) / 1000,
    };
  }

  /** The calling session, as GET /me describes it. */
  describe(caller: AuthContext & { portal: PortalContext }): PortalSessionResponse {
    const { portal } = caller;
    return {
      id: caller.keyId,
      storeId: caller.storeId,
      capabilities: [...portal.capabilities],
      webhookIds: portal.webhookIds ? [...portal.webhookIds] : null,
      branding: portal.branding ?? {},
      expiresAt: portal.expiresAt.toISOString(),
      ...(portal.csrfToken ? { csrfToken: portal.csrfToken } : {}),
    };
  }
}

function describeState(session: PortalSessionState): PortalSessionResponse {
  return {
    id: session.id,
    storeId: session.storeId,
    capabilities: session.capabilities,
    webhookIds: session.webhookIds,
    branding: session.branding ?? {},
    expiresAt: session.expiresAt.toISOString(),
  };
}

/** Only the fields given, so that the stored branding holds no `undefined`. */
function brandingOf(dto: PortalBranding): PortalBranding {
  const branding: PortalBranding = {};
  if (dto.name !== undefined) branding.name = dto.name;
  if (dto.accentColor !== undefined) branding.accentColor = dto.accentColor.toLowerCase();
  if (dto.logoUrl !== undefined) branding.logoUrl = new URL(dto.logoUrl).href;
  return branding;
}
