import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { DeliveryRepository } from './delivery.repository';
import { Dispatcher } from './dispatcher';

/**
 * The safety net under the dispatcher's notifications and timers: once a second it looks for due
 * work anyway (a notification lost while the LISTEN connection was down), and every five seconds
 * it records the attempts of workers that died with a claim (their leases ran out).
 */
@Injectable()
export class DispatchSweeper {
  private readonly logger = new Logger(DispatchSweeper.name);
  private sweeping = false;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly deliveries: DeliveryRepository,
  ) {}

  @Interval(1_000)
  poll(): void {
    if (this.dispatcher.isRunning) this.dispatcher.wake();
  }

  @Interval(5_000)
  async sweepExpiredLeases(): Promise<void> {
    // While claims fail (the database is away) the sweep would fail too, and only add to the log.
    if (!this.dispatcher.isRunning || this.sweeping || this.dispatcher.isBackingOff) return;
    this.sweeping = true;
    try {
      const recovered = await this.deliveries.sweepExpiredLeases(this.dispatcher.leaseDurationMs);
      if (recovered > 0) {
        this.logger.warn(`recovered ${recovered} deliveries whose worker stopped mid-attempt`);
        this.dispatcher.wake();
      }
    } catch (error) {
      this.logger.warn(`lease sweep failed: ${String(error)}`);
    } finally {
      this.sweeping = false;
    }
  }
}
