import { Controller, Get, NotFoundException, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/public.decorator';
import { API_PREFIX } from '../common/api-prefix';
import { AppConfig } from '../config/app-config';
import { DashboardAssets, type DashboardAsset } from './dashboard-assets';

/**
 * Everything from this origin and nothing inline: the page is plain files and ES modules, it
 * builds its DOM without HTML strings (hence Trusted Types), and talks only to the API beside it.
 * Images may also come from https:// sites, for a portal session's logo, whose address the page
 * learns only after it loads (docs/operations.md#embedding-the-dashboard). Framing: by the
 * origins of PORTAL_FRAME_ANCESTORS, none by default.
 */
export function dashboardCsp(frameAncestors: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' https:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'"}`,
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join('; ');
}

/** The headers of every dashboard file. X-Frame-Options, which cannot name several origins, only while none may frame it. */
export function dashboardHeaders(frameAncestors: readonly string[]): Record<string, string> {
  return {
    'Content-Security-Policy': dashboardCsp(frameAncestors),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    ...(frameAncestors.length === 0 ? { 'X-Frame-Options': 'DENY' } : {}),
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}

/**
 * The web dashboard: static files, no API key (it signs in with one, or with a portal link, and
 * then calls the public API). Served at /dashboard and, like /health, also under the API prefix.
 */
@ApiExcludeController()
@Public()
@Controller()
export class DashboardController {
  private readonly headers: Record<string, string>;

  constructor(
    private readonly assets: DashboardAssets,
    config: AppConfig,
  ) {
    this.headers = dashboardHeaders(config.portalFrameAncestors);
  }

  @Get(['dashboard', `${API_PREFIX}/dashboard`])
  page(@Req() req: Request, @Res() res: Response): void {
    this.send(req, res, this.assets.get('index.html')!);
  }

  @Get(['dashboard/{*path}', `${API_PREFIX}/dashboard/{*path}`])
  file(@Req() req: Request, @Res() res: Response): void {
    const path = req.path.slice(req.path.indexOf('/dashboard/') + '/dashboard/'.length);
    const asset = this.assets.get(path === '' ? 'index.html' : path);
    if (!asset) throw new NotFoundException(`No dashboard file ${path}`);
    this.send(req, res, asset);
  }

  /**
   * File names carry no content hash (there is no build step), so browsers revalidate every
   * time (`no-cache`) and get a 304 while the ETag matches.
   */
  private send(req: Request, res: Response, asset: DashboardAsset): void {
    res.set(this.headers);
    // helmet's default, set on every answer before this one: framing is said by the CSP alone here.
    if (!('X-Frame-Options' in this.headers)) res.removeHeader('X-Frame-Options');
    res.set({ 'Cache-Control': 'no-cache', ETag: asset.etag });
    if (req.headers['if-none-match']?.split(/\s*,\s*/).includes(asset.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type(asset.contentType).send(asset.body);
  }
}
