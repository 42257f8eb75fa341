import { Module } from '@nestjs/common';
import { DashboardAssets } from './dashboard-assets';
import { DashboardController } from './dashboard.controller';

/** The web dashboard, served by Hookline itself. */
@Module({
  controllers: [DashboardController],
  providers: [{ provide: DashboardAssets, useFactory: () => new DashboardAssets() }],
})
export class DashboardModule {}
