import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { WebhookRepository } from './webhook.repository';

/**
 * Every second, erases the previous secrets whose rotation overlap has ended. Deliveries stop
 * using one the moment it expires (the claim checks the time); this removes it from the database.
 */
@Injectable()
export class SecretOverlapSweeper {
  private readonly logger = new Logger(SecretOverlapSweeper.name);

  constructor(private readonly webhooks: WebhookRepository) {}

  @Interval(1_000)
  async sweep(): Promise<void> {
    try {
      const erased = await this.webhooks.eraseEndedOverlaps();
      if (erased > 0) this.logger.log(`erased the previous signing secret of ${erased} endpoint(s) whose overlap ended`);
    } catch (error) {
      this.logger.debug(`could not erase ended secret overlaps: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
