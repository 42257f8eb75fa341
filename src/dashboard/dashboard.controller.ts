import { Controller, Get, NotFoundException, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/public.decorator';
import { API_PREFIX } from '../common/api-prefix';
import { DashboardAssets, type DashboardAsset } from './dashboard-assets';

/**
 * Everything from this origin and nothing inline: the page is plain files and ES modules, it
 * builds its DOM without HTML strings (hence Trusted Types), and talks only to the API beside it.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * The web dashboard: static files, no API key (it signs in with one and then calls the
 * public API). Served at /dashboard and, like /health, also under the API prefix.
 */
@ApiExcludeController()
@Public()
@Controller()
export class DashboardController {
  constructor(private readonly assets: DashboardAssets) {}

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
    res.set(SECURITY_HEADERS);
    res.set({ 'Cache-Control': 'no-cache', ETag: asset.etag });
    if (req.headers['if-none-match']?.split(/\s*,\s*/).includes(asset.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type(asset.contentType).send(asset.body);
  }
}
