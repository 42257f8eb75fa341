import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { newId } from '../common/ids';
import { AppConfig } from '../config/app-config';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { Metrics } from '../observability/metrics';
import type { CreateWebhookDto } from './dto/create-webhook.dto';
import type { ListWebhooksQuery } from './dto/list-webhooks.query';
import type { UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhookResponse, WebhookWithSecretResponse } from './dto/webhook.response';
import { generateSigningSecret, SecretCipher } from './secret-cipher';
import { UrlPolicy, UrlPolicyError } from './url-policy';
import type { Webhook } from './webhook.entity';
import { WebhookError } from './webhook.errors';
import { DeactivationHandler, WebhookChanges, WebhookRepository } from './webhook.repository';

const UPDATABLE = ['name', 'url', 'events', 'isActive', 'headers', 'retrySchedule', 'rateLimitPerSecond', 'ordered'] as const;

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
    const url = await this.checkUrl(dto.url);
    const id = newId('wh');
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
        headers: dto.headers ?? {},
        retrySchedule: dto.retrySchedule ?? null,
        rateLimitPerSecond: dto.rateLimitPerSecond ?? null,
        ordered: dto.ordered ?? false,
        // Registered inactive: a person chose it.
        disabledReason: dto.isActive === false ? 'manual' : null,
        disabledAt: dto.isActive === false ? new Date() : null,
      },
      limit,
    );
    if (!webhook) throw WebhookError.limitReached(limit);
    return { ...WebhookResponse.of(webhook), secret };
  }

  async list(storeId: string, query: ListWebhooksQuery): Promise<Page<WebhookResponse>> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.webhooks.page(storeId, {
      limit,
      beforeId: decodeCursor(query.cursor),
      isActive: query.isActive,
      event: query.event,
    });
    return toPage(rows, limit, (webhook) => webhook);
  }

  async get(storeId: string, id: string): Promise<WebhookResponse> {
    return WebhookResponse.of(await this.require(storeId, id));
  }

  async update(storeId: string, id: string, dto: UpdateWebhookDto): Promise<WebhookResponse> {
    const changes: WebhookChanges = {};
    for (const field of UPDATABLE) if (dto[field] !== undefined) Object.assign(changes, { [field]: dto[field] });
    if (Object.keys(changes).length === 0) throw WebhookError.nothingToUpdate(UPDATABLE);
    const current = await this.require(storeId, id);
    if (changes.url !== undefined) changes.url = await this.checkUrl(changes.url);
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

  /** The endpoint, or `WebhookError.notFound` (also when it belongs to another store: never a 403, which would confirm it exists). */
  async require(storeId: string, id: string): Promise<Webhook> {
    const webhook = await this.webhooks.findInStore(storeId, id);
    if (!webhook) throw WebhookError.notFound(id);
    return webhook;
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
