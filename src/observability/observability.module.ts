import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';
import { MetricsController } from './metrics.controller';
import { ShutdownState } from './shutdown-state';

/** /health, /metrics and the HTTP request metrics; {@link Metrics} is available everywhere. */
@Global()
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController, MetricsController],
  providers: [Metrics, ShutdownState],
  exports: [Metrics, ShutdownState],
})
export class ObservabilityModule {}
