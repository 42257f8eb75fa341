import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiKey } from './api-key.entity';
import type { Scope } from './scopes';

@Injectable()
export class ApiKeyRepository {
  constructor(@InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>) {}

  findByHash(keyHash: string): Promise<Pick<ApiKey, 'id' | 'storeId' | 'scopes'> | null> {
    return this.keys.findOne({ select: { id: true, storeId: true, scopes: true }, where: { keyHash } });
  }

  async insert(key: { id: string; storeId: string; name: string; scopes: Scope[]; keyHash: string }): Promise<ApiKey> {
    const rows: ApiKey[] = await this.keys.query(
      `INSERT INTO api_keys (id, store_id, name, scopes, key_hash) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, store_id AS "storeId", name, scopes, created_at AS "createdAt", last_used_at AS "lastUsedAt"`,
      [key.id, key.storeId, key.name, key.scopes, key.keyHash],
    );
    return rows[0];
  }

  /** The bootstrap key keeps a fixed id, so that changing ADMIN_API_KEY replaces it. */
  async upsertBootstrap(id: string, storeId: string, name: string, scopes: Scope[], keyHash: string): Promise<void> {
    await this.keys.query(
      `INSERT INTO api_keys (id, store_id, name, scopes, key_hash) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET key_hash = EXCLUDED.key_hash, scopes = EXCLUDED.scopes`,
      [id, storeId, name, scopes, keyHash],
    );
  }

  listInStore(storeId: string): Promise<ApiKey[]> {
    return this.keys.find({ where: { storeId }, order: { id: 'DESC' } });
  }

  async deleteInStore(storeId: string, id: string): Promise<boolean> {
    const result = await this.keys.delete({ id, storeId });
    return (result.affected ?? 0) > 0;
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.keys.update({ id }, { lastUsedAt: at });
  }
}
