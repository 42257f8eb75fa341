import { Injectable, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ReadBatcher } from '../database/read-batcher';
import { SqlPool } from '../database/sql-pool';
import { DatabaseEngine } from '../database/database-engine';
import type { EventType } from '../catalogue/event-catalogue';
import type { WebhookResponse } from './dto/webhook.response';
import { rowsOf } from '../database/sql';
import { inputRefusal } from './content-filter';
import { showHeaders, type StoredHeaders } from './sensitive-headers';
import { Webhook, type DisabledReason } from './webhook.entity';

export interface WebhookFilter {
  limit: number;
  beforeId?: string;
  isActive?: boolean;
  event?: EventType;
}

export type WebhookChanges = Partial<
  Pick<
    Webhook,
    | 'name'
    | 'url'
    | 'events'
    | 'filter'
    | 'isActive'
    | 'headers'
    | 'sensitiveHeadersEncrypted'
    | 'retrySchedule'
    | 'rateLimitPerSecond'
    | 'ordered'
    | 'auth'
    | 'authEncrypted'
    | 'tls'
    | 'tlsEncrypted'
    | 'disabledReason'
    | 'disabledAt'
  >
>;

/** An endpoint's stored headers and the revision they were read at (see {@link headersRevision}). */
export interface StoredHeadersRow extends StoredHeaders {
  id: string;
  revision: string;
}

/**
 * SQL for the revision of the endpoint `alias`'s headers and receiver credentials: null when it
 * has none, otherwise its updated_at in microseconds, which every write of the row moves. A worker
 * keeps an endpoint's opened headers and credentials until a claim shows another revision, so a
 * claimed row carries this number rather than the headers themselves.
 */
export function headersRevision(alias: string): string {
  return (
    `CASE WHEN ${alias}.headers <> '{}'::jsonb OR ${alias}.auth_encrypted IS NOT NULL OR ${alias}.tls_encrypted IS NOT NULL ` +
    `THEN (extract(epoch FROM ${alias}.updated_at) * 1000000)::bigint::text END`
  );
}

/** What an attempt needs of its endpoint beside the envelope: headers and credentials, sealed. */
export interface SendingRow extends StoredHeadersRow {
  authSealed: string | null;
  tlsSealed: string | null;
}

/** Rows read at once by the start's sealing of sensitive values stored in clear. */
const SEALING_PAGE = 500;

/** The endpoint just made inactive, as it is now (its reason and time already written). */
export type DeactivatedEndpoint = Pick<Webhook, 'id' | 'storeId' | 'name' | 'url' | 'disabledReason' | 'disabledAt'>;

/** Told inside the transaction that makes an endpoint inactive, so its work ends (or its news goes out) with it. */
export type DeactivationHandler = (manager: EntityManager, endpoint: DeactivatedEndpoint) => Promise<void>;

/** An endpoint as lists show it, timestamps already in the API's ISO form. */
const LISTED_COLUMNS = `w.id, w.name, w.url, w.events, w.filter, w.is_active AS "isActive", w.headers, w.retry_schedule AS "retrySchedule",
    w.rate_limit_per_second AS "rateLimitPerSecond", w.ordered, w.auth, w.tls, w.disabled_reason AS "disabledReason", to_char(w.disabled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "disabledAt",
    CASE WHEN w.previous_secret_expires_at > now() THEN json_build_object('oldSecretExpiresAt',
      to_char(w.previous_secret_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) END AS "secretRotation",
    to_char(w.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
    to_char(w.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt"`;

/**
 * The pages of GET /webhooks asked for at the same time, read in one prepared statement straight
 * on the pg pool (one row set per request, told apart by `n`), timestamps already in the API's ISO
 * form: building it with TypeORM's query builder, hydrating entities and parsing dates cost more
 * than the query itself, and under load the round trip cost as much as the rest of the request.
 */
const PAGES = `
  SELECT q.n, ${LISTED_COLUMNS}
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

/**
 * A page of the endpoints among `ids` (a portal session limited to some endpoints): rare, and
 * at most a hundred ids, so read on its own rather than in the batched statement above.
 */
const PAGE_AMONG = `
  SELECT ${LISTED_COLUMNS}
  FROM webhooks w
  WHERE w.store_id = $1 AND w.id = ANY ($2::text[]) AND ($3::text IS NULL OR w.id < $3)
    AND ($4::boolean IS NULL OR w.is_active = $4) AND ($5::text IS NULL OR $5 = ANY (w.events))
  ORDER BY w.id DESC
  LIMIT $6`;

/**
 * The first key of the advisory locks that serialise creates per store (the second is the hash of
 * the store id). The two-key lock space is apart from the one-key locks of migrations and the
 * bootstrap key.
 */
const WEBHOOK_CREATE_LOCK = 0x77680001;

/** Pages read at once: more than this many requests for them wait for a statement to return. */
const PAGE_STATEMENTS_IN_FLIGHT = 2;
const PAGES_PER_STATEMENT = 100;

/**
 * {@link PAGES} for the pages of one store, `$6`, on a Citus cluster (docs/scaling.md, "Citus"):
 * the statement then runs whole on the shard of that store. The pages of other stores that arrive
 * together go in statements of their own, at the same time.
 */
const PAGES_OF_STORE = PAGES.replace('WHERE webhooks.store_id = q.store_id', 'WHERE webhooks.store_id = $6 AND q.store_id = $6');

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
    @Optional() private readonly engine: DatabaseEngine = DatabaseEngine.plain,
  ) {}

  /**
   * Inserts the webhook unless its store already holds `limit` of them (then null). Creates in
   * one store take turns on a transaction-scoped advisory lock, so two at once cannot both see
   * room for one more; creates in other stores, and every other statement, do not wait for it.
   */
  async insertWithinLimit(webhook: Omit<Webhook, 'createdAt' | 'updatedAt'>, limit: number): Promise<Webhook | null> {
    return this.webhooks.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [WEBHOOK_CREATE_LOCK, webhook.storeId]);
      const [{ count }] = await manager.query<Array<{ count: number }>>('SELECT count(*)::int AS count FROM webhooks WHERE store_id = $1', [
        webhook.storeId,
      ]);
      if (count >= limit) return null;
      await manager.insert(Webhook, webhook);
      return manager.findOne(Webhook, { where: { id: webhook.id, storeId: webhook.storeId } });
    });
  }

  findInStore(storeId: string, id: string): Promise<Webhook | null> {
    return this.webhooks.findOne({ where: { id, storeId } });
  }

  /** Newest first, `limit + 1` rows (the extra one tells whether a next page exists). */
  page(storeId: string, filter: WebhookFilter): Promise<WebhookResponse[]> {
    return this.pages.read({ storeId, ...filter });
  }

  /** As {@link page}, among the endpoints `ids` only. */
  async pageAmong(storeId: string, ids: readonly string[], filter: WebhookFilter): Promise<WebhookResponse[]> {
    const result = await this.pool.query<WebhookResponse>({
      text: PAGE_AMONG,
      values: [storeId, ids, filter.beforeId ?? null, filter.isActive ?? null, filter.event ?? null, filter.limit + 1],
    });
    return result.rows.map((webhook) => ({ ...webhook, ...showHeaders(webhook.headers) }));
  }

  /** The ids of `ids` that are endpoints of the store. */
  async existingIds(storeId: string, ids: readonly string[]): Promise<string[]> {
    const rows = await rowsOf<{ id: string }>(
      this.webhooks.manager,
      `SELECT id FROM webhooks WHERE store_id = $1 AND id = ANY ($2::text[])`,
      [storeId, ids],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Applies `changes`; when the endpoint goes from active to inactive, `onDeactivated` runs in the
   * same transaction. An `isActive` it already has changes nothing (nor its reason, nor its
   * time), and an update left with nothing to change writes nothing: disabling an endpoint that
   * is already inactive (Hookline disabled it, say) tells nobody again.
   */
  async update(
    storeId: string,
    id: string,
    changes: WebhookChanges,
    onDeactivated: readonly DeactivationHandler[] = [],
  ): Promise<Webhook | null> {
    return this.webhooks.manager.transaction(async (manager) => {
      // Locked, so that a concurrent disabling (a worker's, another PUT) is seen before deciding.
      const [row] = await rowsOf<{ isActive: boolean }>(
        manager,
        `SELECT is_active AS "isActive" FROM webhooks WHERE id = $1 AND store_id = $2 FOR UPDATE`,
        [id, storeId],
      );
      if (!row) return null;
      const effective = { ...changes };
      if (effective.isActive === row.isActive) {
        delete effective.isActive;
        delete effective.disabledReason;
        delete effective.disabledAt;
      }
      if (Object.keys(effective).length > 0) {
        await manager.update(Webhook, { id, storeId }, { ...effective, updatedAt: () => 'now()' });
      }
      const updated = await manager.findOne(Webhook, { where: { id, storeId } });
      if (updated && effective.isActive === false) for (const handler of onDeactivated) await handler(manager, updated);
      return updated;
    });
  }

  /**
   * A new sealed secret. With an overlap the current one becomes the previous one until then (any
   * earlier previous secret is dropped: a second rotation ends the first overlap); without, none.
   */
  async rotateSecret(storeId: string, id: string, secretEncrypted: string, overlapSeconds: number): Promise<Webhook | null> {
    const rows = await rowsOf<{ id: string }>(
      this.webhooks.manager,
      // The expiry worked out in FROM: Citus sends no now() inside a CASE to a shard.
      `UPDATE webhooks SET
         previous_secret_encrypted = CASE WHEN $4 > 0 THEN secret_encrypted END,
         previous_secret_expires_at = CASE WHEN $4 > 0 THEN overlap.ends END,
         secret_encrypted = $3, updated_at = now()
       FROM (SELECT now() + make_interval(secs => $4) AS ends) overlap
       WHERE id = $1 AND store_id = $2 RETURNING id`,
      [id, storeId, secretEncrypted, overlapSeconds],
    );
    return rows.length > 0 ? this.findInStore(storeId, id) : null;
  }

  /** Erases previous secrets whose overlap has ended: a secret the integrator retired is kept no longer. */
  async eraseEndedOverlaps(): Promise<number> {
    const rows = await rowsOf<{ id: string }>(
      this.webhooks.manager,
      `UPDATE webhooks SET previous_secret_encrypted = NULL, previous_secret_expires_at = NULL
       WHERE previous_secret_expires_at <= now() RETURNING id`,
    );
    return rows.length;
  }

  /**
   * Disables an active endpoint for `reason` (whatever its store: the worker acts on an answer of
   * the endpoint itself), with `onDeactivated` in the same transaction. False when it was not active.
   */
  async disable(id: string, reason: DisabledReason, onDeactivated: readonly DeactivationHandler[]): Promise<boolean> {
    return this.webhooks.manager.transaction(async (manager) => {
      // Conditional on is_active: of several workers disabling the same endpoint at once, one does
      // (the others wait for its row lock, then find it inactive), and its handlers run once.
      const [endpoint] = await rowsOf<DeactivatedEndpoint>(
        manager,
        `UPDATE webhooks SET is_active = false, disabled_reason = $2, disabled_at = now(), updated_at = now()
         WHERE id = $1 AND is_active
         RETURNING id, store_id AS "storeId", name, url, disabled_reason AS "disabledReason", disabled_at AS "disabledAt"`,
        [id, reason],
      );
      if (!endpoint) return false;
      for (const handler of onDeactivated) await handler(manager, endpoint);
      return true;
    });
  }

  /** Inactive endpoints by why they were disabled (the metrics' gauge). */
  async countDisabled(): Promise<Array<{ reason: DisabledReason | null; count: number }>> {
    return rowsOf<{ reason: DisabledReason | null; count: number }>(
      this.webhooks.manager,
      `SELECT disabled_reason AS reason, count(*)::int AS count FROM webhooks WHERE NOT is_active GROUP BY disabled_reason`,
    );
  }

  /** Deleting cascades to the endpoint's deliveries: nothing more is attempted, retries included. */
  async delete(storeId: string, id: string): Promise<boolean> {
    const result = await this.webhooks.delete({ id, storeId });
    return (result.affected ?? 0) > 0;
  }

  /** The endpoints' stored headers and sealed credentials, read for sending (endpoints that no longer exist are left out). */
  async storedHeaders(ids: readonly string[]): Promise<SendingRow[]> {
    return rowsOf<SendingRow>(
      this.webhooks.manager,
      `SELECT w.id, coalesce(${headersRevision('w')}, '') AS revision, w.headers, w.sensitive_headers_encrypted AS sealed,
         w.auth_encrypted AS "authSealed", w.tls_encrypted AS "tlsSealed"
       FROM webhooks w WHERE w.id = ANY($1::text[])`,
      [ids],
    );
  }

  /** One endpoint's stored headers, in its store (a PUT keeps the sensitive values it gives as null). */
  async storedHeadersInStore(storeId: string, id: string): Promise<StoredHeaders | undefined> {
    const [row] = await rowsOf<StoredHeaders>(
      this.webhooks.manager,
      `SELECT headers, sensitive_headers_encrypted AS sealed FROM webhooks WHERE id = $1 AND store_id = $2`,
      [id, storeId],
    );
    return row;
  }

  /** Endpoints with headers, by id after `afterId`, a page at a time, with their sealed signing secret (the sealing at start). */
  async pageWithHeaders(afterId: string): Promise<Array<StoredHeadersRow & { secretSealed: string }>> {
    return rowsOf<StoredHeadersRow & { secretSealed: string }>(
      this.webhooks.manager,
      `SELECT id, '' AS revision, headers, sensitive_headers_encrypted AS sealed, secret_encrypted AS "secretSealed" FROM webhooks
       WHERE id > $1 AND headers <> '{}'::jsonb ORDER BY id LIMIT $2`,
      [afterId, SEALING_PAGE],
    );
  }

  /**
   * Replaces an endpoint's stored headers if they are still `expected` (another process sealing
   * the same row at the same time, or a PUT in between, wins). False when they were not.
   */
  async replaceStoredHeaders(id: string, expected: StoredHeaders, next: StoredHeaders): Promise<boolean> {
    const rows = await rowsOf<{ id: string }>(
      this.webhooks.manager,
      `UPDATE webhooks SET headers = $4::jsonb, sensitive_headers_encrypted = $5, updated_at = now()
       WHERE id = $1 AND headers = $2::jsonb AND sensitive_headers_encrypted IS NOT DISTINCT FROM $3 RETURNING id`,
      [id, JSON.stringify(expected.headers), expected.sealed, JSON.stringify(next.headers), next.sealed],
    );
    return rows.length > 0;
  }

  /** The sealed signing secret, and the previous one while its overlap lasts (the endpoint test signs with both). */
  async sealedSecrets(id: string): Promise<{ current: string; previous: string | null } | undefined> {
    const [row] = await rowsOf<{ current: string; previous: string | null }>(
      this.webhooks.manager,
      `SELECT secret_encrypted AS current,
         CASE WHEN previous_secret_expires_at > now() THEN previous_secret_encrypted END AS previous
       FROM webhooks WHERE id = $1`,
      [id],
    );
    return row;
  }

  /** PostgreSQL's own printing of a content filter, or its parser's refusal in its words. */
  async parseFilter(filter: string): Promise<{ canonical: string } | { refusal: string }> {
    try {
      const [{ canonical }] = await rowsOf<{ canonical: string }>(this.webhooks.manager, `SELECT $1::jsonpath::text AS canonical`, [
        filter,
      ]);
      return { canonical };
    } catch (error) {
      const refusal = inputRefusal(error);
      if (refusal === undefined) throw error;
      return { refusal };
    }
  }

  /**
   * Whether the filter matches the event, evaluated as the fan-out evaluates it; the refusal of an
   * event PostgreSQL cannot read as jsonb. The filter must have parsed ({@link parseFilter}).
   */
  async matchesFilter(filter: string, event: unknown): Promise<{ matches: boolean } | { refusal: string }> {
    try {
      const [{ matches }] = await rowsOf<{ matches: boolean }>(
        this.webhooks.manager,
        `SELECT hookline_filter_matches($2::jsonb, $1::jsonpath) AS matches`,
        [filter, JSON.stringify(event)],
      );
      return { matches };
    } catch (error) {
      const refusal = inputRefusal(error);
      if (refusal === undefined) throw error;
      return { refusal };
    }
  }

  /** The newest endpoints' sealed signing secrets (the start's check of SECRET_ENCRYPTION_KEY). */
  async newestSealedSecrets(limit: number): Promise<Array<{ id: string; sealed: string }>> {
    return rowsOf<{ id: string; sealed: string }>(
      this.webhooks.manager,
      `SELECT id, secret_encrypted AS sealed FROM webhooks ORDER BY updated_at DESC LIMIT $1`,
      [limit],
    );
  }

  private async readPages(queries: PageQuery[]): Promise<WebhookResponse[][]> {
    if (this.engine.citus) return this.readPagesByStore(queries);
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
    // The row's sensitive values are null already; shown by name whatever is stored all the same.
    for (const { n, ...webhook } of result.rows) pages[Number(n) - 1].push({ ...webhook, ...showHeaders(webhook.headers) });
    return pages;
  }
  private async readPagesByStore(queries: PageQuery[]): Promise<WebhookResponse[][]> {
    const pages = queries.map((): WebhookResponse[] => []);
    const stores = [...new Set(queries.map((q) => q.storeId))];
    await Promise.all(
      stores.map(async (storeId) => {
        const indexes = queries.flatMap((q, i) => (q.storeId === storeId ? [i] : []));
        const mine = indexes.map((i) => queries[i]);
        const result = await this.pool.query<WebhookResponse & { n: string }>({
          name: 'hookline-webhooks-pages-of-store',
          text: PAGES_OF_STORE,
          values: [
            mine.map((q) => q.storeId),
            mine.map((q) => q.beforeId ?? null),
            mine.map((q) => q.isActive ?? null),
            mine.map((q) => q.event ?? null),
            mine.map((q) => q.limit + 1),
            storeId,
          ],
        });
        for (const { n, ...webhook } of result.rows) pages[indexes[Number(n) - 1]].push({ ...webhook, ...showHeaders(webhook.headers) });
      }),
    );
    return pages;
  }
}
