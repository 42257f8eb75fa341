import { Injectable } from '@nestjs/common';

/**
 * Set when SIGTERM/SIGINT arrives (main.ts). From then on /health answers 503, so that a load
 * balancer stops sending requests while in-flight deliveries drain.
 */
@Injectable()
export class ShutdownState {
  private draining = false;

  beginDraining(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }
}
