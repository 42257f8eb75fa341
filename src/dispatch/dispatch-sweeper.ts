import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Dispatcher } from './dispatcher';

/**
 * The safety net under the dispatcher's notifications and timers: once a second it asks for a
 * claim anyway. That claim takes up what nothing else announced: work whose notification was lost
 * while the LISTEN connection was down, retries another process scheduled, and deliveries whose
 * lease ran out because their worker died mid-attempt (the claim records that attempt as
 * interrupted, see DeliveryRepository.claimDue).
 */
@Injectable()
export class DispatchSweeper {
  constructor(private readonly dispatcher: Dispatcher) {}

  @Interval(1_000)
  poll(): void {
    if (this.dispatcher.isRunning) this.dispatcher.wake();
  }
}
