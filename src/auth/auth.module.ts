import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKey } from './api-key.entity';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyRepository } from './api-key.repository';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';
import { BootstrapKey } from './bootstrap-key';
import { Store } from './store.entity';
import { StoreRepository } from './store.repository';
import { StoresController } from './stores.controller';
import { StoresService } from './stores.service';

/** Stores (tenants), API keys and their scopes, and the guard that every route goes through. */
@Module({
  imports: [TypeOrmModule.forFeature([Store, ApiKey])],
  controllers: [ApiKeysController, StoresController],
  providers: [
    ApiKeyRepository,
    StoreRepository,
    ApiKeyAuthenticator,
    ApiKeysService,
    StoresService,
    BootstrapKey,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
})
export class AuthModule {}
