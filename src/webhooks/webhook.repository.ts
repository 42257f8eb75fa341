import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ReadBatcher } from '../database/read-batcher';
import { SqlPool } from '../database/sql-pool';
import type { EventType } from '../catalogue/event-catalogue';
import type { WebhookResponse } from './dto/webhook.response';
import { Webhook } from './webhook.entity';

export interface WebhookFilter {
  limit: number;
  beforeId?: string;
  isActive?: boolean;
  event?: EventType;
}

export type WebhookChanges = Partial<Pick<Webhook, 'name' | 'url' | 'events' | 'isActive'>>;

/** Told inside the transaction that makes an endpoint inactive, so its work ends with it. */
export type DeactivationHandler = (manager: EntityManager, webhookId: string) => Promise<void>;

/**
 * The pages of GET /webhooks asked for at the same time, read in one prepared statement straight
 * on the pg pool (one row set per request, told apart by `n`), timestamps already in the API's ISO
 * form: building it with TypeORM's query builder, hydrating entities and parsing dates cost more
 * than the query itself, and under load the round trip cost as much as the rest of the request.
 */
const PAGES = `
  SELECT q.n, w.id, w.name, w.url, w.events, w.is_active AS "isActive",
    to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
    to_char(w.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt"
  FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::int[])
    WITH ORDINALITY AS q (store_id, before_id, is_active, event, row_limit, n)
  CROSS JOIN LATERAL (
    SELECT * FROM webhooks
    WHERE webhooks.store_id = q.store_id AND (q.before_id IS NULL OR webhooks.id < q.before_id)
      AND (q.is_active IS NULL OR webhooks.is_active = q.is_active) AND (q.event IS NULL OR q.event = ANY (webhooks.events))
    ORDER BY webhooks.id DESC
    LIMIT q.row_limit
  ) w
  ORDER BY q.n, w.id DESC`;

/** Pages read at once: more than this many requests for them wait for a statement to return. */
const PAGE_STATEMENTS_IN_FLIGHT = 2;
const PAGES_PER_STATEMENT = 100;

interface PageQuery extends WebhookFilter {
  storeId: string;
}

@Injectable()
export class WebhookRepository {
  private readonly pages = new ReadBatcher(
    (queries: PageQuery[]) => this.readPages(queries),
    PAGE_STATEMENTS_IN_FLIGHT,
    PAGES_PER_STATEMENT,
  );

  constructor(
    @InjectRepository(Webhook) private readonly webhooks: Repository<Webhook>,
    private readonly pool: SqlPool,
  ) {}

  async insert(webhook: Omit<Webhook, 'createdAt' | 'updatedAt'>): Promise<Webhook> {
    await this.webhooks.insert(webhook);
    return (await this.findInStore(webhook.storeId, webhook.id))!;
  }

  findInStore(storeId: string, id: string): Promise<Webhook | null> {
    return this.webhooks.findOne({ where: { id, storeId } });
  }

  /** Newest first, `limit + 1` rows (the extra one tells whether a next page exists). */
  page(storeId: string, filter: WebhookFilter): Promise<WebhookResponse[]> {
    return this.pages.read({ storeId, ...filter });
  }

  /** Applies `changes`; when the endpoint goes inactive, `onDeactivated` runs in the same transaction. */
  async update(
    storeId: string,
    id: string,
    changes: WebhookChanges,
    onDeactivated: readonly DeactivationHandler[] = [],
  ): Promise<Webhook | null> {
    return this.webhooks.manager.transaction(async (manager) => {
      const result = await manager.update(Webhook, { id, storeId }, { ...changes, updatedAt: () => 'now()' });
      if (!result.affected) return null;
      if (changes.isActive === false) for (const handler of onDeactivated) await handler(manager, id);
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

  private async readPages(queries: PageQuery[]): Promise<WebhookResponse[][]> {
    const result = await this.pool.query<WebhookResponse & { n: string }>({
      name: 'hookline-webhooks-pages',
      text: PAGES,
      values: [
        queries.map((q) => q.storeId),
        queries.map((q) => q.beforeId ?? null),
        queries.map((q) => q.isActive ?? null),
        queries.map((q) => q.event ?? null),
        queries.map((q) => q.limit + 1),
      ],
    });
    const pages = queries.map((): WebhookResponse[] => []);
    for (const { n, ...webhook } of result.rows) pages[Number(n) - 1].push(webhook);
    return pages;
  }
}
