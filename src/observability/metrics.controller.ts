import { Public } from '../common/public.decorator';
import { API_PREFIX } from '../common/api-prefix';
import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Metrics } from './metrics';

@ApiExcludeController()
@Public()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  /** Prometheus text exposition; no API key. */
  @Get(['metrics', `${API_PREFIX}/metrics`])
  @Header('Cache-Control', 'no-store')
  async scrape(@Res() res: Response): Promise<void> {
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
