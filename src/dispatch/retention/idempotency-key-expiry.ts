import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { AppConfig } from '../../config/app-config';
import { EventRepository } from '../store/event.repository';

/** Hourly: idempotency keys older than 24 hours are forgotten (publishing also checks the age). */
@Injectable()
export class IdempotencyKeyExpiry {
  private readonly logger = new Logger(IdempotencyKeyExpiry.name);

  constructor(
    private readonly config: AppConfig,
    private readonly events: EventRepository,
  ) {}

  @Cron(CronExpression.EVERY_HOUR)
  async expire(): Promise<void> {
    if (!this.config.runsWorker) return;
    await this.events
      .expireIdempotencyKeys()
      .catch((error: unknown) => this.logger.warn(`idempotency key expiry failed: ${String(error)}`));
  }
}
