import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { newId } from '../common/ids';
import { AppConfig } from '../config/app-config';
import { formatDuration } from '../config/retry-schedule';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { Metrics } from '../observability/metrics';
import type { CreateWebhookDto } from './dto/create-webhook.dto';
import type { ListWebhooksQuery } from './dto/list-webhooks.query';
import type { UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhookResponse, WebhookWithSecretResponse } from './dto/webhook.response';
import type { FilterTestResponse } from './dto/filter-test.response';
import { filterVariables } from './content-filter';
import { endpointHeadersSize, headersTooLarge, MAX_ENDPOINT_HEADERS_SIZE } from './endpoint-headers';
import { generateSigningSecret, SecretCipher } from './secret-cipher';
import { headersToSend, keepStoredValues, sealHeaders, type StoredHeaders } from './sensitive-headers';
import { openAccess, sealAuth, sealTls, type ClientTls, type ReceiverAccess, type ReceiverAuth } from './receiver-credentials';
import { UrlPolicy, UrlPolicyError } from './url-policy';
import type { Webhook } from './webhook.entity';
import { WebhookError } from './webhook.errors';
import { DeactivationHandler, WebhookChanges, WebhookRepository } from './webhook.repository';

/** An endpoint's headers ready to send, every value in clear, and the revision they were read at. */
export interface SendableHeaders {
  revision: string;
  headers: Record<string, string>;
  /** Set instead of `headers` when the sealed values do not open with SECRET_ENCRYPTION_KEY. */
  error?: string;
  /** The endpoint's receiver credentials (auth, mutual TLS), opened; undefined when it has none. */
  access?: ReceiverAccess;
}

/** The attempt's error when an endpoint's receiver credentials cannot be opened. */
export const UNREADABLE_CREDENTIALS_ERROR =
  "not sent: the endpoint's auth or tls cannot be decrypted with SECRET_ENCRYPTION_KEY; set them again";

/** The attempt's error when an endpoint's sensitive header values cannot be opened. */
export const UNREADABLE_HEADERS_ERROR =
  "not sent: the endpoint's sensitive header values cannot be decrypted with SECRET_ENCRYPTION_KEY; set the headers again";

const UPDATABLE = [
  'name',
  'url',
  'events',
  'isActive',
  'headers',
  'retrySchedule',
  'rateLimitPerSecond',
  'ordered',
  'auth',
  'tls',
] as const;

@Injectable()
export class WebhooksService implements OnModuleInit {
  private readonly deactivationHandlers: DeactivationHandler[] = [];

  constructor(
    private readonly config: AppConfig,
    private readonly webhooks: WebhookRepository,
    private readonly urlPolicy: UrlPolicy,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    this.metrics.countDisabledEndpointsWith(() => this.webhooks.countDisabled());
  }

  /**
   * Registers work to end when an endpoint is made inactive (dispatch ends its waiting deliveries);
   * it runs in the transaction of the change, so it holds or rolls back with it.
   */
  onDeactivated(handler: DeactivationHandler): void {
    this.deactivationHandlers.push(handler);
  }

  async create(storeId: string, dto: CreateWebhookDto): Promise<WebhookWithSecretResponse> {
    this.checkSchedule(dto.retrySchedule);
    const url = await this.checkUrl(dto.url);
    if (typeof dto.filter === 'string') await this.checkFilter(dto.filter);
    const id = newId('wh');
    // A new endpoint has no stored value to keep.
    const headers = await this.headersToStore(id, dto.headers ?? {}, async () => ({}));
    const credentials = await this.credentialsToStore(id, dto, Object.keys(dto.headers ?? {}), null);
    const secret = generateSigningSecret();
    const limit = this.config.maxWebhooksPerStore;
    const webhook = await this.webhooks.insertWithinLimit(
      {
        id,
        storeId,
        name: dto.name,
        url,
        events: dto.events,
        isActive: dto.isActive ?? true,
        secretEncrypted: this.cipher.encrypt(secret, id),
        previousSecretExpiresAt: null,
        headers: headers.headers,
        sensitiveHeadersEncrypted: headers.sealed,
        retrySchedule: dto.retrySchedule ?? null,
        rateLimitPerSecond: dto.rateLimitPerSecond ?? null,
        ordered: dto.ordered ?? false,
        filter: dto.filter ?? null,
        auth: null,
        tls: null,
        ...credentials,
        // Registered inactive: a person chose it.
        disabledReason: dto.isActive === false ? 'manual' : null,
        disabledAt: dto.isActive === false ? new Date() : null,
      },
      limit,
    );
    if (!webhook) throw WebhookError.limitReached(limit);
    return { ...WebhookResponse.of(webhook), secret };
  }

  /** A page of the store's endpoints; with `among` (a portal session's `webhookIds`), of those alone. */
  async list(storeId: string, query: ListWebhooksQuery, among?: readonly string[]): Promise<Page<WebhookResponse>> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const filter = { limit, beforeId: decodeCursor(query.cursor), isActive: query.isActive, event: query.event };
    const rows = among ? await this.webhooks.pageAmong(storeId, among, filter) : await this.webhooks.page(storeId, filter);
    return toPage(rows, limit, (webhook) => webhook);
  }

  async get(storeId: string, id: string): Promise<WebhookResponse> {
    return WebhookResponse.of(await this.require(storeId, id));
  }

  async update(storeId: string, id: string, dto: UpdateWebhookDto): Promise<WebhookResponse> {
    const changes: WebhookChanges = {};
    for (const field of UPDATABLE) if (dto[field] !== undefined) Object.assign(changes, { [field]: dto[field] });
    if (dto.filter !== undefined) changes.filter = dto.filter;
    if (Object.keys(changes).length === 0) throw WebhookError.nothingToUpdate([...UPDATABLE, 'filter']);
    this.checkSchedule(changes.retrySchedule);
    if (typeof changes.filter === 'string') await this.checkFilter(changes.filter);
    const current = await this.require(storeId, id);
    if (changes.headers !== undefined) {
      const stored = await this.headersToStore(id, changes.headers, () => this.currentHeaders(storeId, id));
      Object.assign(changes, { headers: stored.headers, sensitiveHeadersEncrypted: stored.sealed });
    }
    if (changes.url !== undefined) changes.url = await this.checkUrl(changes.url);
    if (dto.auth !== undefined || dto.tls !== undefined || changes.headers !== undefined) {
      Object.assign(changes, await this.credentialsToStore(id, dto, Object.keys(changes.headers ?? current.headers), current));
    }
    // Re-enabling clears why it was disabled; a person disabling an active endpoint is the reason.
    if (changes.isActive === true) Object.assign(changes, { disabledReason: null, disabledAt: null });
    if (changes.isActive === false && current.isActive) Object.assign(changes, { disabledReason: 'manual', disabledAt: new Date() });
    const updated = await this.webhooks.update(storeId, id, changes, this.deactivationHandlers);
    if (!updated) throw WebhookError.notFound(id);
    return WebhookResponse.of(updated);
  }

  async delete(storeId: string, id: string): Promise<void> {
    if (!(await this.webhooks.delete(storeId, id))) throw WebhookError.notFound(id);
  }

  /**
   * A new secret signs from now on. With an overlap the old one signs beside it for that many
   * seconds (a receiver can switch without failing a delivery); without, it stops at once.
   */
  async rotateSecret(storeId: string, id: string, overlapSeconds = 0): Promise<WebhookWithSecretResponse> {
    const secret = generateSigningSecret();
    const updated = await this.webhooks.rotateSecret(storeId, id, this.cipher.encrypt(secret, id), overlapSeconds);
    if (!updated) throw WebhookError.notFound(id);
    return { ...WebhookResponse.of(updated), secret };
  }

  /** Disables an endpoint that answered 410 Gone; its waiting deliveries end as for any inactive endpoint. */
  async disableGone(id: string): Promise<boolean> {
    return this.webhooks.disable(id, 'gone', this.deactivationHandlers);
  }

  /**
   * Disables an endpoint whose attempts have all failed for too long (dispatch decides when,
   * docs/operations.md). False when it was no longer active: another worker, or a person, came first.
   */
  async disableFailing(id: string): Promise<boolean> {
    return this.webhooks.disable(id, 'failing', this.deactivationHandlers);
  }

  /**
   * The headers of these endpoints to send, opened, by id (an endpoint that no longer exists is
   * missing). The dispatcher keeps them by revision, so each endpoint's are opened once.
   */
  async headersToSend(ids: readonly string[]): Promise<Map<string, SendableHeaders>> {
    const rows = await this.webhooks.storedHeaders(ids);
    const answer = new Map<string, SendableHeaders>();
    for (const row of rows) {
      let headers: Record<string, string>;
      try {
        headers = headersToSend(this.cipher, row.id, row);
      } catch {
        answer.set(row.id, { revision: row.revision, headers: {}, error: UNREADABLE_HEADERS_ERROR });
        continue;
      }
      try {
        answer.set(row.id, { revision: row.revision, headers, access: openAccess(this.cipher, row.id, row) });
      } catch {
        answer.set(row.id, { revision: row.revision, headers: {}, error: UNREADABLE_CREDENTIALS_ERROR });
      }
    }
    return answer;
  }

  /** Whether an endpoint with this filter would be sent this event (POST /webhooks/filter-test). */
  async testFilter(filter: string, event: Record<string, unknown>): Promise<FilterTestResponse> {
    await this.checkFilter(filter);
    const result = await this.webhooks.matchesFilter(filter, event);
    if ('refusal' in result) throw WebhookError.invalidFilter(`event cannot be read as JSON by the database: ${result.refusal}`);
    return result;
  }

  /** The endpoint, or `WebhookError.notFound` (also when it belongs to another store: never a 403, which would confirm it exists). */
  async require(storeId: string, id: string): Promise<Webhook> {
    const webhook = await this.webhooks.findInStore(storeId, id);
    if (!webhook) throw WebhookError.notFound(id);
    return webhook;
  }

  /**
   * The headers as stored, sensitive values sealed. A sensitive header given as null keeps the
   * value stored for it (`current` reads them, only when one is null); refused when none is, or
   * when all names and values together pass the limit.
   */
  private async headersToStore(
    id: string,
    given: Record<string, string | null>,
    current: () => Promise<Record<string, string>>,
  ): Promise<StoredHeaders> {
    const keepsAny = Object.values(given).some((value) => value === null);
    const { headers, missing } = keepStoredValues(given, keepsAny ? await current() : {});
    if (missing.length > 0)
      throw WebhookError.invalidHeaders(
        `headers: ${missing.map((name) => JSON.stringify(name)).join(', ')} ${missing.length > 1 ? 'are' : 'is'} null, ` +
          'which keeps a stored value, but none is stored; give the value',
      );
    const size = endpointHeadersSize(headers);
    if (size > MAX_ENDPOINT_HEADERS_SIZE) throw WebhookError.invalidHeaders(headersTooLarge(size));
    return sealHeaders(this.cipher, id, headers);
  }

  /**
   * The stored form of the `auth` and `tls` given (left out: unchanged; null: removed), after the
   * URL policy has accepted an OAuth2 token URL. Refused when auth would be set beside an
   * Authorization header (`headerNames`, as they will be): which of the two is sent would be a guess.
   */
  private async credentialsToStore(
    id: string,
    given: { auth?: ReceiverAuth | null; tls?: ClientTls | null },
    headerNames: readonly string[],
    current: Pick<Webhook, 'auth'> | null,
  ): Promise<WebhookChanges> {
    const changes: WebhookChanges = {};
    const auth = given.auth === undefined ? current?.auth : given.auth;
    if (auth && headerNames.some((name) => name.toLowerCase() === 'authorization')) {
      throw WebhookError.invalidCredentials(
        'auth: an endpoint with auth sends its own Authorization header; remove Authorization from headers, or set auth to null',
      );
    }
    if (given.auth !== undefined) {
      let value = given.auth;
      if (value?.type === 'oauth2') value = { ...value, tokenUrl: await this.checkTokenUrl(value.tokenUrl) };
      const sealed = sealAuth(this.cipher, id, value);
      Object.assign(changes, { auth: sealed.auth, authEncrypted: sealed.authSealed });
    }
    if (given.tls !== undefined) {
      const sealed = sealTls(this.cipher, id, given.tls);
      Object.assign(changes, { tls: sealed.tls, tlsEncrypted: sealed.tlsSealed });
    }
    return changes;
  }

  private async checkTokenUrl(raw: string): Promise<string> {
    try {
      return (await this.urlPolicy.assertRegistrable(raw)).toString();
    } catch (error) {
      // The policy's sentences name `url`; here they are about the token URL.
      if (error instanceof UrlPolicyError) {
        const reason = error.message.startsWith('url ')
          ? error.message.replace(/^url/, 'auth.tokenUrl')
          : `auth.tokenUrl: ${error.message}`;
        throw WebhookError.invalidCredentials(reason);
      }
      throw error;
    }
  }

  /** An endpoint's headers as stored now, every value in clear. */
  private async currentHeaders(storeId: string, id: string): Promise<Record<string, string>> {
    const stored = await this.webhooks.storedHeadersInStore(storeId, id);
    if (!stored) throw WebhookError.notFound(id);
    return headersToSend(this.cipher, id, stored);
  }

  /**
   * A filter is PostgreSQL's to judge, since PostgreSQL runs it: refused with its parser's message,
   * or when it names a variable (`$name`), which no event supplies.
   */
  private async checkFilter(filter: string): Promise<void> {
    const parsed = await this.webhooks.parseFilter(filter);
    if ('refusal' in parsed) throw WebhookError.invalidFilter(`filter does not parse: ${parsed.refusal}`);
    const [variable] = filterVariables(parsed.canonical);
    if (variable) {
      throw WebhookError.invalidFilter(
        `filter uses the variable ${variable}, which no event supplies; write the value itself, or a path such as $.data.total`,
      );
    }
  }

  /** A delivery expires MAX_DELIVERY_AGE after its event: an endpoint's schedule must end before that. */
  private checkSchedule(schedule: readonly number[] | null | undefined): void {
    const spanMs = (schedule ?? []).reduce((sum, delay) => sum + delay, 0);
    if (spanMs > this.config.maxDeliveryAgeMs) {
      throw WebhookError.scheduleTooLong(formatDuration(spanMs), formatDuration(this.config.maxDeliveryAgeMs));
    }
  }

  private async checkUrl(raw: string): Promise<string> {
    try {
      return (await this.urlPolicy.assertRegistrable(raw)).toString();
    } catch (error) {
      if (error instanceof UrlPolicyError) throw WebhookError.invalidUrl(error.message);
      throw error;
    }
  }
}
