import { Injectable, OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { WebhooksService } from '../../webhooks/webhooks.service';
import type { DeactivatedEndpoint } from '../../webhooks/webhook.repository';
import { DeliveryRepository } from '../store/delivery.repository';
import { EventRepository } from '../store/event.repository';
import { webhookDisabledEvent } from '../../catalogue/operational-events';

/**
 * An endpoint made inactive takes its waiting deliveries with it (they end `failed`, retryable by
 * hand) and starts afresh on its health (re-enabled, it gets the whole ENDPOINT_DISABLE_AFTER_MS
 * again). When Hookline disabled it (failing, gone), the store's other endpoints subscribed to
 * webhook.disabled are told, in the same transaction: the event exists if and only if the endpoint
 * was disabled, once.
 */
@Injectable()
export class EndpointDeactivation implements OnModuleInit {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly deliveries: DeliveryRepository,
    private readonly events: EventRepository,
  ) {}

  onModuleInit(): void {
    this.webhooks.onDeactivated((manager, endpoint) => this.deactivated(manager, endpoint));
  }

  private async deactivated(manager: EntityManager, endpoint: DeactivatedEndpoint): Promise<void> {
    await this.deliveries.failWaiting(manager, endpoint.id);
    await this.deliveries.clearHealth(manager, endpoint.id);
    const event = webhookDisabledEvent(endpoint);
    // The endpoint is already inactive in this transaction, so the fan-out leaves it out.
    if (event) await this.events.publish({ ...event, storeId: endpoint.storeId, type: 'webhook.disabled' }, 0, manager);
  }
}
