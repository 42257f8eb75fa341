import type { EntityManager } from 'typeorm';
import type { DeliveryRepository } from './delivery.repository';
import { EndpointDeactivation } from './endpoint-deactivation';
import type { WebhooksService } from '../webhooks/webhooks.service';
import type { DeactivationHandler } from '../webhooks/webhook.repository';

describe('EndpointDeactivation', () => {
  it("ends the endpoint's waiting deliveries in the transaction that deactivates it", async () => {
    const handlers: DeactivationHandler[] = [];
    const webhooks = { onDeactivated: (handler: DeactivationHandler) => handlers.push(handler) } as unknown as WebhooksService;
    const failWaiting = jest.fn().mockResolvedValue(undefined);
    new EndpointDeactivation(webhooks, { failWaiting } as unknown as DeliveryRepository).onModuleInit();

    const manager = {} as EntityManager;
    expect(handlers).toHaveLength(1);
    await handlers[0](manager, 'wh_1');
    expect(failWaiting).toHaveBeenCalledWith(manager, 'wh_1');
  });
});
