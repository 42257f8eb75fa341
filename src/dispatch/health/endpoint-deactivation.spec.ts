import type { EntityManager } from 'typeorm';
import type { DeliveryRepository } from '../store/delivery.repository';
import { EndpointDeactivation } from './endpoint-deactivation';
import type { EventRepository, NewEvent } from '../store/event.repository';
import type { WebhooksService } from '../../webhooks/webhooks.service';
import type { DeactivatedEndpoint, DeactivationHandler } from '../../webhooks/webhook.repository';

describe('EndpointDeactivation', () => {
  const manager = {} as EntityManager;
  let handler: DeactivationHandler;
  let failWaiting: jest.Mock;
  let clearHealth: jest.Mock;
  let publish: jest.Mock;

  beforeEach(() => {
    const handlers: DeactivationHandler[] = [];
    const webhooks = { onDeactivated: (h: DeactivationHandler) => handlers.push(h) } as unknown as WebhooksService;
    failWaiting = jest.fn().mockResolvedValue(undefined);
    clearHealth = jest.fn().mockResolvedValue(undefined);
    publish = jest.fn().mockResolvedValue({ deliveries: 1 });
    new EndpointDeactivation(
      webhooks,
      { failWaiting, clearHealth } as unknown as DeliveryRepository,
      { publish } as unknown as EventRepository,
    ).onModuleInit();
    expect(handlers).toHaveLength(1);
    handler = handlers[0];
  });

  function endpoint(disabledReason: DeactivatedEndpoint['disabledReason']): DeactivatedEndpoint {
    return {
      id: 'wh_1',
      storeId: 'st_1',
      name: 'ERP',
      url: 'https://erp.test/hook',
      disabledReason,
      disabledAt: new Date('2026-11-25T10:00:00.000Z'),
    };
  }

  it("ends the endpoint's waiting deliveries and its failing count in the transaction that deactivates it", async () => {
    await handler(manager, endpoint('manual'));
    expect(failWaiting).toHaveBeenCalledWith(manager, 'wh_1');
    expect(clearHealth).toHaveBeenCalledWith(manager, 'wh_1');
  });

  it('tells nobody when a person disabled it', async () => {
    await handler(manager, endpoint('manual'));
    expect(publish).not.toHaveBeenCalled();
  });

  it.each(['failing', 'gone'] as const)(
    'publishes webhook.disabled in the same transaction when Hookline disabled it (%s)',
    async (reason) => {
      await handler(manager, endpoint(reason));
      expect(publish).toHaveBeenCalledTimes(1);
      const [event, firstDelayMs, used] = publish.mock.calls[0] as [NewEvent, number, EntityManager];
      expect(used).toBe(manager);
      expect(firstDelayMs).toBe(0);
      expect(event).toMatchObject({ storeId: 'st_1', type: 'webhook.disabled' });
      expect(JSON.parse(event.body)).toEqual({
        id: event.id,
        type: 'webhook.disabled',
        timestamp: event.createdAt.toISOString(),
        data: { webhookId: 'wh_1', name: 'ERP', url: 'https://erp.test/hook', reason, disabledAt: '2026-11-25T10:00:00.000Z' },
      });
    },
  );
});
