import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { EntityManager, Repository } from 'typeorm';
import { poolOf } from '../database/sql';
import type { EventType } from '../events/catalogue/event-catalogue';
import type { WebhookResponse } from './dto/webhook.response';
import { Webhook } from './webhook.entity';

export interface WebhookFilter {
  limit: number;
  beforeId?: string;
  isActive?: boolean;
  event?: EventType;
}

export type WebhookChanges = Partial<Pick<Webhook, 'name' | 'url' | 'events' | 'isActive'>>;

/** Message left on pending deliveries of an endpoint that was made inactive (CONTRACT §7). */
export const INACTIVE_ENDPOINT_ERROR = 'endpoint is inactive; retry the delivery once it is active again';

/**
 * GET /webhooks as one prepared statement straight on the pg pool, timestamps already in the
 * API's ISO form: building it with TypeORM's query builder, hydrating entities and parsing dates
 * cost more than the query itself (bench/README.md).
 */
const PAGE = `
  SELECT id, name, url, events, is_active AS "isActive",
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
    to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt"
  FROM webhooks
  WHERE store_id = $1 AND ($2::text IS NULL OR id < $2) AND ($3::boolean IS NULL OR is_active = $3)
    AND ($4::text IS NULL OR $4 = ANY (events))
  ORDER BY id DESC
  LIMIT $5`;

@Injectable()
export class WebhookRepository {
  private readonly pool: Pool;

  constructor(@InjectRepository(Webhook) private readonly webhooks: Repository<Webhook>) {
    this.pool = poolOf(webhooks.manager.connection);
  }

  async insert(webhook: Omit<Webhook, 'createdAt' | 'updatedAt'>): Promise<Webhook> {
    await this.webhooks.insert(webhook);
    return (await this.findInStore(webhook.storeId, webhook.id))!;
  }

  findInStore(storeId: string, id: string): Promise<Webhook | null> {
    return this.webhooks.findOne({ where: { id, storeId } });
  }

  /** Newest first, `limit + 1` rows (the extra one tells whether a next page exists). */
  async page(storeId: string, filter: WebhookFilter): Promise<WebhookResponse[]> {
    const result = await this.pool.query<WebhookResponse>({
      name: 'hookline-webhooks-page',
      text: PAGE,
      values: [storeId, filter.beforeId ?? null, filter.isActive ?? null, filter.event ?? null, filter.limit + 1],
    });
    return result.rows;
  }

  /**
   * Applies `changes`; when the endpoint goes inactive, its waiting deliveries end `failed` in the
   * same transaction, so none of them is attempted afterwards (CONTRACT §7). Attempts already in
   * flight finish and are recorded as they went; if one fails, the worker's next claim finds the
   * endpoint inactive and ends that delivery `failed` the same way (Dispatcher.attempt).
   */
  async update(storeId: string, id: string, changes: WebhookChanges): Promise<Webhook | null> {
    return this.webhooks.manager.transaction(async (manager) => {
      const result = await manager.update(Webhook, { id, storeId }, { ...changes, updatedAt: () => 'now()' });
      if (!result.affected) return null;
      if (changes.isActive === false) await this.failPendingDeliveries(manager, id);
      return manager.findOne(Webhook, { where: { id, storeId } });
    });
  }

  async setSecret(storeId: string, id: string, secretEncrypted: string): Promise<Webhook | null> {
    const result = await this.webhooks.update({ id, storeId }, { secretEncrypted, updatedAt: () => 'now()' });
    return result.affected ? this.findInStore(storeId, id) : null;
  }

  /** Deleting cascades to the endpoint's deliveries: nothing more is attempted, retries included. */
  async delete(storeId: string, id: string): Promise<boolean> {
    const result = await this.webhooks.delete({ id, storeId });
    return (result.affected ?? 0) > 0;
  }

  /** The sealed signing secret, for the dispatcher. */
  async sealedSecret(id: string): Promise<string | undefined> {
    const row = await this.webhooks.findOne({ select: { id: true, secretEncrypted: true }, where: { id } });
    return row?.secretEncrypted;
  }

  private async failPendingDeliveries(manager: EntityManager, webhookId: string): Promise<void> {
    await manager.query(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, last_error = $2, updated_at = now()
       WHERE webhook_id = $1 AND status = 'pending' AND lease_token IS NULL`,
      [webhookId, INACTIVE_ENDPOINT_ERROR],
    );
  }
}
