import { Injectable, OnModuleInit } from '@nestjs/common';
import { WebhooksService } from '../webhooks/webhooks.service';
import { DeliveryRepository } from './delivery.repository';

/** An endpoint made inactive takes its waiting deliveries with it (they end `failed`, retryable by hand). */
@Injectable()
export class EndpointDeactivation implements OnModuleInit {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly deliveries: DeliveryRepository,
  ) {}

  onModuleInit(): void {
    this.webhooks.onDeactivated((manager, webhookId) => this.deliveries.failWaiting(manager, webhookId));
  }
}
