import { Injectable } from '@nestjs/common';
import { newId } from '../common/ids';
import { PgNotifier } from '../database/pg-notifier';
import { API_KEY_REVOKED_CHANNEL, ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeyRepository } from './api-key.repository';
import { AuthError } from './auth.errors';
import { generateApiKeyText, hashApiKey } from './api-key-text';
import type { AuthContext } from './auth-context';
import { ApiKeyListResponse, ApiKeyResponse, CreatedApiKeyResponse } from './dto/api-key.response';
import type { CreateApiKeyDto } from './dto/create-api-key.dto';
import type { MeResponse } from './dto/me.response';
import { StoreRepository } from './store.repository';

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly stores: StoreRepository,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly notifier: PgNotifier,
  ) {}

  /** Creates a key in `storeId`; the caller can grant only scopes it holds itself. */
  async create(caller: AuthContext, storeId: string, dto: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    const beyond = dto.scopes.filter((scope) => !caller.scopes.includes(scope));
    if (beyond.length > 0) {
      throw AuthError.scopeBeyondCaller(beyond);
    }
    if (storeId !== caller.storeId && !(await this.stores.exists(storeId))) {
      throw AuthError.storeNotFound(storeId);
    }
    const text = generateApiKeyText();
    const key = await this.keys.insert({ id: newId('key'), storeId, name: dto.name, scopes: dto.scopes, keyHash: hashApiKey(text) });
    return { id: key.id, name: key.name, scopes: key.scopes, storeId: key.storeId, key: text, createdAt: key.createdAt.toISOString() };
  }

  /** The calling key, with the name the guard's cached context does not carry. */
  async describe(caller: AuthContext): Promise<MeResponse> {
    const key = await this.keys.findInStore(caller.storeId, caller.keyId);
    // Revoked between the guard's check and this read.
    if (!key) throw AuthError.apiKeyNotFound(caller.keyId);
    return { id: key.id, name: key.name, storeId: key.storeId, scopes: key.scopes };
  }

  async list(storeId: string): Promise<ApiKeyListResponse> {
    return { data: (await this.keys.listInStore(storeId)).map((key) => ApiKeyResponse.of(key)) };
  }

  /** Revokes at once: this process forgets the key now, the others on the notification. */
  async revoke(storeId: string, id: string): Promise<void> {
    if (!(await this.keys.deleteInStore(storeId, id))) throw AuthError.apiKeyNotFound(id);
    this.authenticator.evict(id);
    await this.notifier.notify(API_KEY_REVOKED_CHANNEL, id);
  }
}
