import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { Tracing } from '../../observability/tracing';
import { DeliveryRepository } from '../store/delivery.repository';
import { outcomeOf, unsignedAttempt } from '../worker/attempt-runner';
import { WebhookSender } from '../sending/webhook-sender';
import { signingSecret, type SigningSecret } from '../sending/signature';
import { SecretCipher } from '../../webhooks/secret-cipher';
import { WebhookRepository } from '../../webhooks/webhook.repository';
import { WebhooksService } from '../../webhooks/webhooks.service';
import { TEST_EVENT_TYPE, type TestEventData } from '../../catalogue/event-catalogue';
import type { TestDeliveryResponse } from './dto/test-delivery.response';
import { buildEnvelope } from '../../catalogue/envelope';
import { EventRepository } from '../store/event.repository';

/**
 * POST /webhooks/:id/test: one signed `webhook.test` delivery, attempted once,
 * synchronously, active endpoint or not, and recorded in the delivery log like any other.
 */
@Injectable()
export class WebhookTester {
  constructor(
    private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly webhooks: WebhooksService,
    private readonly webhookRows: WebhookRepository,
    private readonly events: EventRepository,
    private readonly deliveries: DeliveryRepository,
    private readonly sender: WebhookSender,
    private readonly cipher: SecretCipher,
    private readonly tracing: Tracing,
  ) {}

  async test(storeId: string, webhookId: string): Promise<TestDeliveryResponse> {
    const webhook = await this.webhooks.require(storeId, webhookId);
    const data: TestEventData = {
      webhookId,
      name: webhook.name,
      message: `This is a test event from ${this.config.serviceName}. No action is needed.`,
    };
    const { envelope, body } = buildEnvelope(TEST_EVENT_TYPE, data);
    const leaseToken = randomUUID();
    // With tracing on, the test event is published and attempted as spans of the caller's trace, like any other.
    const publish = this.tracing.startPublish(storeId, [TEST_EVENT_TYPE]);
    // Written leased to us, so that no worker picks it up while we send it ourselves.
    const deliveryId = await this.dataSource
      .transaction(async (manager) => {
        await this.events.insert(manager, {
          id: envelope.id,
          storeId,
          type: TEST_EVENT_TYPE,
          body,
          createdAt: new Date(envelope.timestamp),
          traceparent: publish?.traceparent,
        });
        return this.deliveries.createLeased(
          manager,
          { storeId, eventId: envelope.id, eventType: TEST_EVENT_TYPE },
          webhookId,
          leaseToken,
          this.config.deliveryTimeoutMs + this.config.leaseMarginMs,
        );
      })
      .catch((error: unknown) => {
        publish?.fail(error);
        throw error;
      });
    publish?.end({ deliveries: 1, eventId: envelope.id });
    const sealed = (await this.webhookRows.sealedSecrets(webhookId))!;
    const headers = (await this.webhooks.headersToSend([webhookId])).get(webhookId);
    const secret = headers?.error ? undefined : this.open(sealed.current, webhookId);
    const span =
      secret && publish
        ? this.tracing.startAttempt({
            parent: publish.traceparent,
            storeId,
            eventId: envelope.id,
            eventType: TEST_EVENT_TYPE,
            endpointId: webhookId,
            deliveryId,
            attemptNumber: 1,
            url: webhook.url,
          })
        : undefined;
    // As for a delivery: a secret (or sensitive headers) that does not decrypt here fails the test without a request.
    const result = secret
      ? await this.sender.send({
          url: webhook.url,
          eventId: envelope.id,
          body,
          secret,
          previousSecret: sealed.previous ? this.open(sealed.previous, webhookId) : undefined,
          headers: headers?.headers ?? {},
          traceparent: span?.traceparent,
          access: headers?.access,
        })
      : unsignedAttempt(headers?.error);
    span?.end({ ...result, status: result.succeeded ? 'succeeded' : 'failed' });
    // As with a 410, a person probing an endpoint should see the answer, not count against it: a
    // test that fails neither counts toward disabling it nor tells anyone; one that succeeds is a success.
    await this.deliveries.recordOutcomes([
      {
        ...outcomeOf({ deliveryId, leaseToken, attemptNumber: 1, cycleAttempt: 1 }, result, result.succeeded ? 'succeeded' : 'failed', 0),
        stampSuccess: true,
        probe: true,
      },
    ]);
    return {
      success: result.succeeded,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      eventId: envelope.id,
      deliveryId,
    };
  }

  /** The signing secret, or undefined when it does not decrypt with this process's key. */
  private open(sealed: string, webhookId: string): SigningSecret | undefined {
    try {
      return signingSecret(this.cipher.decrypt(sealed, webhookId));
    } catch {
      return undefined;
    }
  }
}
