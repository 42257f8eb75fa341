import { Public } from '../common/public.decorator';
import { API_PREFIX } from '../common/api-prefix';
import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ShutdownState } from './shutdown-state';

@ApiTags('health')
@Public()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownState,
  ) {}

  @Get(['health', `${API_PREFIX}/health`])
  @HealthCheck()
  @ApiOperation({
    summary: 'Readiness: 200 when the database answers, 503 otherwise (no API key)',
    description: `Also served at \`/health\` itself, outside the \`/${API_PREFIX}\` prefix, for probes.`,
    operationId: 'HealthController_check',
  })
  @ApiResponse({ status: 200, description: 'Ready' })
  @ApiResponse({ status: 503, description: 'The database is unreachable, or the process is shutting down' })
  async check(@Res({ passthrough: true }) res: Response): Promise<HealthCheckResult> {
    if (this.shutdown.isDraining) {
      res.status(503);
      const down = { shutdown: { status: 'down' as const, message: 'shutting down: finishing in-flight deliveries' } };
      return { status: 'error', info: {}, error: down, details: down };
    }
    try {
      return await this.health.check([() => this.database.pingCheck('database', { timeout: 2_000 })]);
    } catch (error) {
      // Terminus's own report (which check failed, and why) is more useful here than the API error shape.
      if (!(error instanceof ServiceUnavailableException)) throw error;
      res.status(503);
      return error.getResponse() as HealthCheckResult;
    }
  }
}
