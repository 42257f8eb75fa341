import { DomainErrorKind } from '../../common/domain-error';
import { loadConfig } from '../../config/app-config';
import type { PgNotifier } from '../../database/pg-notifier';
import { WebhookError } from '../../webhooks/webhook.errors';
import type { WebhooksService } from '../../webhooks/webhooks.service';
import { DeliveriesService } from './deliveries.service';
import { DeliveryError, DeliveryErrorCode } from './delivery.errors';
import type { DeliveryLog } from '../store/delivery-log.repository';

describe('DeliveriesService.replay', () => {
  const config = loadConfig({ RETENTION_DAYS: '30' });

  function service(endpoint: { isActive: boolean } | null, answer: Promise<unknown> = Promise.resolve({ queued: 4, next: null })) {
    const replay = jest.fn().mockReturnValue(answer);
    const require = jest.fn(async (_storeId: string, id: string) => {
      if (!endpoint) throw WebhookError.notFound(id);
      return endpoint;
    });
    const deliveries = new DeliveriesService(
      config,
      { replay } as unknown as DeliveryLog,
      { require } as unknown as WebhooksService,
      {} as PgNotifier,
    );
    return { deliveries, replay, require };
  }

  it("queues the window's missed events of an active endpoint in the caller's store, and says how many", async () => {
    const { deliveries, replay, require } = service({ isActive: true });
    const since = new Date(Date.now() - 3_600_000).toISOString();
    await expect(deliveries.replay('st_a', 'wh_1', { since })).resolves.toEqual({ queued: 4 });
    expect(require).toHaveBeenCalledWith('st_a', 'wh_1');
    const [, , window] = replay.mock.calls[0] as [string, string, { from: Date; until: Date }];
    expect(replay).toHaveBeenCalledWith('st_a', 'wh_1', window);
    expect(window.from.toISOString()).toBe(since);
    expect(Math.abs(window.until.getTime() - Date.now())).toBeLessThan(1_000);
  });

  it('says where to continue when the replay stopped at its cap', async () => {
    const { deliveries } = service({ isActive: true }, Promise.resolve({ queued: 10_000, next: new Date('2026-11-25T10:00:00.007Z') }));
    await expect(deliveries.replay('st_a', 'wh_1', { since: new Date(Date.now() - 3_600_000).toISOString() })).resolves.toEqual({
      queued: 10_000,
      next: '2026-11-25T10:00:00.007Z',
    });
  });

  it('answers a conflict while another replay of the endpoint runs, and a timed-out one as unavailable', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    await expect(service({ isActive: true }, Promise.resolve(null)).deliveries.replay('st_a', 'wh_1', { since })).rejects.toMatchObject({
      code: DeliveryErrorCode.ReplayRunning,
      kind: DomainErrorKind.Conflict,
    });
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    await expect(service({ isActive: true }, Promise.reject(timeout)).deliveries.replay('st_a', 'wh_1', { since })).rejects.toMatchObject({
      code: DeliveryErrorCode.ReplayTimedOut,
      kind: DomainErrorKind.Unavailable,
      message: expect.stringMatching(/longer than 30000 ms .* queuing nothing/),
    });
  });

  it('refuses an inactive endpoint with a conflict that says to re-enable it, queuing nothing', async () => {
    const { deliveries, replay } = service({ isActive: false });
    const refusal = deliveries.replay('st_a', 'wh_1', { since: new Date(Date.now() - 1_000).toISOString() });
    await expect(refusal).rejects.toMatchObject({
      code: DeliveryErrorCode.WebhookInactive,
      message: expect.stringMatching(/re-enable it/),
    });
    expect(replay).not.toHaveBeenCalled();
  });

  it('refuses a bad window before looking the endpoint up, and an unknown one after', async () => {
    const { deliveries, replay, require } = service(null);
    await expect(
      deliveries.replay('st_a', 'wh_1', { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }),
    ).rejects.toBeInstanceOf(DeliveryError);
    expect(require).not.toHaveBeenCalled();
    await expect(deliveries.replay('st_a', 'wh_1', { since: '2026-01-01T00:00:00Z' })).rejects.toBeInstanceOf(WebhookError);
    expect(replay).not.toHaveBeenCalled();
  });
});

describe('DeliveriesService.retry', () => {
  const config = loadConfig({ MAX_ATTEMPTS_PER_DELIVERY: '5' });

  function service(state: { status: string; attemptCount: number }) {
    const restart = jest.fn().mockResolvedValue({ id: 'del_1', status: 'pending', createdAt: new Date(), updatedAt: new Date() });
    const deliveries = new DeliveriesService(
      config,
      { stateInStore: jest.fn().mockResolvedValue({ ...state, webhookId: 'wh_1' }), restart } as unknown as DeliveryLog,
      { require: jest.fn().mockResolvedValue({ isActive: true }) } as unknown as WebhooksService,
      { notify: jest.fn() } as unknown as PgNotifier,
    );
    return { deliveries, restart };
  }

  it('refuses, as a conflict naming the limit, a delivery that has had MAX_ATTEMPTS_PER_DELIVERY attempts', async () => {
    const { deliveries, restart } = service({ status: 'failed', attemptCount: 5 });
    await expect(deliveries.retry('st_a', 'del_1')).rejects.toMatchObject({
      code: DeliveryErrorCode.AttemptsExhausted,
      kind: DomainErrorKind.Conflict,
      message: 'Delivery del_1 has had 5 attempts, the most a delivery may have (MAX_ATTEMPTS_PER_DELIVERY); it cannot be retried again',
    });
    expect(restart).not.toHaveBeenCalled();
  });

  it('restarts one below it', async () => {
    const { deliveries, restart } = service({ status: 'failed', attemptCount: 4 });
    await deliveries.retry('st_a', 'del_1');
    expect(restart).toHaveBeenCalledWith('st_a', 'del_1');
  });
});
