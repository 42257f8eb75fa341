import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { ApiKey } from './api-key.entity';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';
import { BootstrapKey } from './bootstrap-key';
import { EndpointDirectory } from './endpoint-directory';
import { MeController } from './me.controller';
import { PortalSession } from './portal-session.entity';
import { PortalSessionAuthenticator } from './portal-session-authenticator';
import { PortalSessionRepository } from './portal-session.repository';
import { PortalSessionsController } from './portal-sessions.controller';
import { PortalSessionsService } from './portal-sessions.service';
import { RATE_LIMIT_WINDOW_MS, RateLimitGuard, rateLimitMessage } from './rate-limit.guard';
import { FixedWindowThrottlerStorage } from './rate-limit-storage';
import { RequestAuthenticator } from './request-authenticator';
import { Store } from './store.entity';
import { StoreRepository } from './store.repository';
import { StoresController } from './stores.controller';
import { StoresService } from './stores.service';

/** Stores (tenants), API keys and their scopes, portal sessions, and the guards that every route goes through. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Store, ApiKey, PortalSession]),
    ThrottlerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        throttlers: [{ name: 'default', ttl: RATE_LIMIT_WINDOW_MS, limit: Math.max(config.rateLimitPerMinute, 1) }],
        storage: new FixedWindowThrottlerStorage(),
        errorMessage: (_context, { limit, tracker, timeToBlockExpire }) => rateLimitMessage(limit, tracker, timeToBlockExpire),
      }),
    }),
  ],
  controllers: [ApiKeysController, StoresController, MeController, PortalSessionsController],
  providers: [
    ApiKeyRepository,
    StoreRepository,
    ApiKeyAuthenticator,
    PortalSessionRepository,
    PortalSessionAuthenticator,
    RequestAuthenticator,
    PortalSessionsService,
    EndpointDirectory,
    ApiKeysService,
    StoresService,
    BootstrapKey,
    // Guards run in this order: the rate limit first, so that requests with made-up keys count too.
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [EndpointDirectory],
})
export class AuthModule {}
