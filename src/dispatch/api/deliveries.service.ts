import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { isStatementTimeout } from '../../common/database-errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../../common/pagination';
import { PgNotifier } from '../../database/pg-notifier';
import { WebhooksService } from '../../webhooks/webhooks.service';
import { DeliveryError } from './delivery.errors';
import { DeliveryLog, type QueuedBatch } from '../store/delivery-log.repository';
import { DELIVERIES_CHANNEL } from '../store/deliveries-channel';
import { AttemptResponse, DeliveryDetailResponse, DeliveryResponse, ReplayResponse, RetryFailedResponse } from './dto/delivery.response';
import type { ListDeliveriesQuery } from './dto/list-deliveries.query';
import type { ReplayDto } from './dto/replay.dto';
import { replayWindow } from './replay-window';

@Injectable()
export class DeliveriesService {
  constructor(
    private readonly config: AppConfig,
    private readonly deliveries: DeliveryLog,
    private readonly webhooks: WebhooksService,
    private readonly notifier: PgNotifier,
  ) {}

  async listForWebhook(storeId: string, webhookId: string, query: ListDeliveriesQuery): Promise<Page<DeliveryResponse>> {
    await this.webhooks.require(storeId, webhookId);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.deliveries.pageForWebhook(storeId, webhookId, {
      limit,
      beforeId: decodeCursor(query.cursor),
      status: query.status,
      eventType: query.eventType,
    });
    return toPage(rows, limit, (row) => DeliveryResponse.of(row));
  }

  /** With `among` (a portal session's endpoints), a delivery to another endpoint is not found. */
  async get(storeId: string, id: string, among?: readonly string[]): Promise<DeliveryDetailResponse> {
    const row = await this.deliveries.findInStore(storeId, id);
    if (!row || (among && !among.includes(row.webhookId))) throw DeliveryError.notFound(id);
    const attempts = await this.deliveries.attemptsOf(id);
    return {
      ...DeliveryResponse.of(row),
      event: JSON.parse(row.body) as DeliveryDetailResponse['event'],
      attempts: attempts.map((attempt) => AttemptResponse.of(attempt)),
    };
  }

  /**
   * A failed or succeeded delivery starts a new cycle (same event id and body); pending → 409, and
   * so is one that has had its MAX_ATTEMPTS_PER_DELIVERY attempts. With `among` (a portal
   * session's endpoints), a delivery to another endpoint is not found.
   */
  async retry(storeId: string, id: string, among?: readonly string[]): Promise<DeliveryResponse> {
    const current = await this.deliveries.stateInStore(storeId, id);
    if (!current || (among && !among.includes(current.webhookId))) throw DeliveryError.notFound(id);
    if (current.status === 'pending') throw DeliveryError.stillPending(id);
    const maxAttempts = this.config.maxAttemptsPerDelivery;
    if (current.attemptCount >= maxAttempts) throw DeliveryError.attemptsExhausted(id, maxAttempts);
    await this.requireActive(storeId, current.webhookId);
    const restarted = await this.deliveries.restart(storeId, id);
    if (!restarted) throw DeliveryError.stillPending(id);
    await this.notifier.notify(DELIVERIES_CHANNEL);
    return DeliveryResponse.of(restarted);
  }

  /**
   * A new cycle for the endpoint's failed deliveries, at most MAX_REPLAY_DELIVERIES of them, with
   * the `since` that continues when more are left.
   */
  async retryFailed(storeId: string, webhookId: string, since?: string): Promise<RetryFailedResponse> {
    await this.requireActive(storeId, webhookId);
    const batch = await this.bounded(webhookId, () =>
      this.deliveries.restartFailed(storeId, webhookId, since ? new Date(since) : undefined),
    );
    if (batch.queued > 0) await this.notifier.notify(DELIVERIES_CHANNEL);
    return RetryFailedResponse.of(batch);
  }

  /**
   * Queues, for an active endpoint, a delivery of every event of the window of a type it
   * subscribes to now that it has none of yet, such as those published while it was disabled: at
   * most MAX_REPLAY_DELIVERIES of them, with the `since` that continues when more are left.
   */
  async replay(storeId: string, webhookId: string, dto: ReplayDto): Promise<ReplayResponse> {
    const window = replayWindow(dto.since, dto.until, new Date(), this.config.retentionDays);
    await this.requireActive(storeId, webhookId, 'replaying');
    return ReplayResponse.of(await this.bounded(webhookId, () => this.deliveries.replay(storeId, webhookId, window)));
  }

  /** One replay or retry-failed of an endpoint at a time, within REPLAY_TIMEOUT_MS, in domain terms. */
  private async bounded(webhookId: string, run: () => Promise<QueuedBatch | null>): Promise<QueuedBatch> {
    let batch: QueuedBatch | null;
    try {
      batch = await run();
    } catch (error) {
      if (isStatementTimeout(error)) throw DeliveryError.replayTimedOut(this.config.replayTimeoutMs);
      throw error;
    }
    if (!batch) throw DeliveryError.replayRunning(webhookId);
    return batch;
  }

  private async requireActive(storeId: string, webhookId: string, action?: 'retrying' | 'replaying'): Promise<void> {
    const webhook = await this.webhooks.require(storeId, webhookId);
    if (!webhook.isActive) throw DeliveryError.webhookInactive(webhookId, action);
  }
}
