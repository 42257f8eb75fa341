import { Body, Controller, Delete, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiErrors } from '../common/api-errors.decorator';
import { ErrorResponse } from '../common/error-response';
import { Public } from '../common/public.decorator';
import { AppConfig } from '../config/app-config';
import { Auth, type AuthContext, StoreId } from './auth-context';
import { CreatePortalSessionDto, ExchangePortalCodeDto } from './dto/create-portal-session.dto';
import { CreatedPortalSessionResponse, PortalSessionResponse } from './dto/portal-session.response';
import { portalCookie, portalCookiePolicy, type PortalCookiePolicy } from './portal-cookie';
import { PortalSessionsService } from './portal-sessions.service';
import { RequireScopes } from './require-scopes.decorator';

export const CREATE_PORTAL_SESSION_DESCRIPTION =
  'A session of the store’s dashboard for someone without an API key. Open `url` once in a browser: its one-time code signs ' +
  'the browser in (an HttpOnly cookie) to that store alone, with the capabilities given; a second use is refused. `token` ' +
  'authenticates API requests as `Authorization: Bearer <token>` with the same store and capabilities. A read session’s ' +
  'writes answer 403; with `webhookIds` the session sees and acts on those endpoints alone. The caller can hand out only ' +
  'what it may do itself (`read` needs webhooks:read, `manage` webhooks:write).';

@ApiTags('portal-sessions')
@Controller('portal-sessions')
export class PortalSessionsController {
  private readonly cookiePolicy: PortalCookiePolicy;

  constructor(
    private readonly sessions: PortalSessionsService,
    config: AppConfig,
  ) {
    this.cookiePolicy = portalCookiePolicy(config);
  }

  @Post()
  @RequireScopes('portal:write')
  @ApiOperation({
    summary: "Create a portal session of the caller's store (the link and token are shown once)",
    description: CREATE_PORTAL_SESSION_DESCRIPTION,
  })
  @ApiCreatedResponse({ type: CreatedPortalSessionResponse })
  @ApiErrors(400)
  create(@Auth() auth: AuthContext, @Body() dto: CreatePortalSessionDto): Promise<CreatedPortalSessionResponse> {
    return this.sessions.create(auth, auth.storeId, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('portal:write')
  @ApiOperation({ summary: 'End a portal session at once: its token and its browser cookie answer 401 from then on' })
  @ApiNoContentResponse({ description: 'Ended' })
  @ApiErrors(404)
  revoke(@StoreId() storeId: string, @Param('id') id: string): Promise<void> {
    return this.sessions.revoke(storeId, id);
  }

  @Post('exchange')
  @HttpCode(200)
  @Public()
  @ApiOperation({
    summary: "Exchange a portal link's one-time code for the browser's session cookie (the dashboard does this)",
    description:
      'Sets an HttpOnly cookie for the session, sent to the API only; the dashboard then names the session in `X-Portal-Session` ' +
      'and sends `csrfToken` in `X-CSRF-Token` with every request that changes something. A code works once.',
  })
  @ApiOkResponse({
    type: PortalSessionResponse,
    headers: { 'Set-Cookie': { description: 'The session cookie', schema: { type: 'string' } } },
  })
  @ApiUnauthorizedResponse({ description: 'The code is unknown, already used, or its session expired or was ended', type: ErrorResponse })
  @ApiErrors(400)
  async exchange(@Body() dto: ExchangePortalCodeDto, @Res({ passthrough: true }) res: Response): Promise<PortalSessionResponse> {
    const { session, cookieSecret, maxAgeSeconds } = await this.sessions.exchange(dto.code);
    res.setHeader('Set-Cookie', portalCookie(session.id, cookieSecret, maxAgeSeconds, this.cookiePolicy));
    res.setHeader('Cache-Control', 'no-store');
    return session;
  }
}
