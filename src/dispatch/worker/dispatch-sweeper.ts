import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { DeliveryRepository } from '../store/delivery.repository';
import { Dispatcher } from './dispatcher';
import { errorMessage } from '../../common/failure-log';

/**
 * The safety net under the dispatcher's notifications and timers: once a second it asks for a
 * claim anyway. That claim takes up what nothing else announced: work whose notification was lost
 * while the LISTEN connection was down, retries another process scheduled, and deliveries whose
 * lease ran out because their worker died mid-attempt (the claim records that attempt as
 * interrupted, see DeliveryRepository.claimDue). It also lets go the first waiting delivery of an
 * ordered endpoint that nothing is ahead of any more (DeliveryRepository.releaseStalledOrdered).
 */
@Injectable()
export class DispatchSweeper {
  private readonly logger = new Logger(DispatchSweeper.name);
  private releasing = false;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly deliveries: DeliveryRepository,
  ) {}

  @Interval(1_000)
  poll(): void {
    if (!this.dispatcher.isRunning) return;
    this.dispatcher.wake();
    void this.releaseStalled();
  }

  private async releaseStalled(): Promise<void> {
    if (this.releasing) return;
    this.releasing = true;
    try {
      if ((await this.deliveries.releaseStalledOrdered()) > 0) this.dispatcher.wake();
    } catch (error) {
      // The next poll tries again; claims report an outage themselves.
      this.logger.debug(`could not release stalled ordered deliveries: ${errorMessage(error)}`);
    } finally {
      this.releasing = false;
    }
  }
}
