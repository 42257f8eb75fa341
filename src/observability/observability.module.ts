import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';
import { MetricsController } from './metrics.controller';
import { ShutdownState } from './shutdown-state';
import { Tracing } from './tracing';
import { tracingSdkProvider } from './tracing-sdk';

/** /health, /metrics and the HTTP request metrics; {@link Metrics} and {@link Tracing} are available everywhere. */
@Global()
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController, MetricsController],
  providers: [Metrics, ShutdownState, tracingSdkProvider, Tracing],
  exports: [Metrics, ShutdownState, Tracing],
})
export class ObservabilityModule {}
