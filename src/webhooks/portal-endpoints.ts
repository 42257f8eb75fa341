import { Injectable, OnModuleInit } from '@nestjs/common';
import { EndpointDirectory } from '../auth/endpoint-directory';
import { WebhookRepository } from './webhook.repository';

/** Tells auth which endpoints a store has, so that a portal session's `webhookIds` can be checked. */
@Injectable()
export class PortalEndpoints implements OnModuleInit {
  constructor(
    private readonly directory: EndpointDirectory,
    private readonly webhooks: WebhookRepository,
  ) {}

  onModuleInit(): void {
    this.directory.register((storeId, ids) => this.webhooks.existingIds(storeId, ids));
  }
}
