import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { AppConfig } from '../config/app-config';
import { SettingsRepository } from '../database/settings.repository';
import { PortalEndpoints } from './portal-endpoints';
import { SecretCipher } from './secret-cipher';
import { SecretOverlapSweeper } from './secret-overlap-sweeper';
import { loadSecretEncryptionKey } from './secret-encryption-key';
import { verifySecretEncryptionKey } from './secret-key-check';
import { SensitiveHeaderSealer } from './sensitive-header-sealer';
import { systemResolver, URL_RESOLVER, UrlPolicy } from './url-policy';
import { Webhook } from './webhook.entity';
import { WebhookRepository } from './webhook.repository';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Webhook endpoints: registration, the URL policy, signing secrets and sensitive header values (encrypted at rest). */
@Module({
  imports: [TypeOrmModule.forFeature([Webhook]), AuthModule],
  controllers: [WebhooksController],
  providers: [
    WebhookRepository,
    WebhooksService,
    PortalEndpoints,
    SecretOverlapSweeper,
    SensitiveHeaderSealer,
    // Bound explicitly (not left to @Optional) so that a test can replace it with overrideProvider.
    { provide: URL_RESOLVER, useValue: systemResolver },
    UrlPolicy,
    {
      provide: SecretCipher,
      inject: [AppConfig, SettingsRepository, WebhookRepository],
      useFactory: async (config: AppConfig, settings: SettingsRepository, webhooks: WebhookRepository) => {
        const cipher = new SecretCipher(await loadSecretEncryptionKey(config, settings));
        await verifySecretEncryptionKey(cipher, settings, (limit) => webhooks.newestSealedSecrets(limit));
        return cipher;
      },
    },
  ],
  exports: [WebhookRepository, WebhooksService, UrlPolicy, SecretCipher],
})
export class WebhooksModule {}
