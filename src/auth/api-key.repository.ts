import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiKey } from './api-key.entity';
import type { Scope } from './scopes';

export interface NewApiKey {
  id: string;
  storeId: string;
  name: string;
  scopes: Scope[];
  keyHash: string;
}

const FIRST_KEY_LOCK = 7_338_249_012;

@Injectable()
export class ApiKeyRepository {
  constructor(@InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>) {}

  findByHash(keyHash: string): Promise<Pick<ApiKey, 'id' | 'storeId' | 'scopes'> | null> {
    return this.keys.findOne({ select: { id: true, storeId: true, scopes: true }, where: { keyHash } });
  }

  async insert(key: NewApiKey): Promise<ApiKey> {
    const rows: ApiKey[] = await this.keys.query(
      `INSERT INTO api_keys (id, store_id, name, scopes, key_hash) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, store_id AS "storeId", name, scopes, created_at AS "createdAt", last_used_at AS "lastUsedAt"`,
      [key.id, key.storeId, key.name, key.scopes, key.keyHash],
    );
    return rows[0];
  }

  /**
   * Makes `key` the one key under its fixed id, replacing the hash held there before; answers the
   * ids of keys that stopped working (that one, and `legacyName`'s key if it was the first key ever).
   */
  async replaceBootstrap(key: NewApiKey, legacyName: string): Promise<string[]> {
    return this.keys.manager.transaction(async (manager) => {
      const [previous] = await manager.query<Array<{ key_hash: string }>>(`SELECT key_hash FROM api_keys WHERE id = $1 FOR UPDATE`, [
        key.id,
      ]);
      await manager.query(
        `INSERT INTO api_keys (id, store_id, name, scopes, key_hash) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO UPDATE SET key_hash = EXCLUDED.key_hash, name = EXCLUDED.name, scopes = EXCLUDED.scopes,
           created_at = CASE WHEN api_keys.key_hash = EXCLUDED.key_hash THEN api_keys.created_at ELSE EXCLUDED.created_at END,
           last_used_at = CASE WHEN api_keys.key_hash = EXCLUDED.key_hash THEN api_keys.last_used_at ELSE NULL END`,
        [key.id, key.storeId, key.name, key.scopes, key.keyHash],
      );
      // A key generated before the bootstrap key had a fixed id got a random one; being generated
      // only into an empty table, it is the oldest key.
      const legacy = await manager.query<Array<{ id: string }>>(
        `DELETE FROM api_keys WHERE id = (SELECT id FROM api_keys ORDER BY created_at, id LIMIT 1) AND id <> $1 AND name = $2 RETURNING id`,
        [key.id, legacyName],
      );
      return [...(previous && previous.key_hash !== key.keyHash ? [key.id] : []), ...legacy.map((row) => row.id)];
    });
  }

  /** Inserts `key` if the table holds no key at all; several processes may try at once, one succeeds. */
  async insertIfNone(key: NewApiKey): Promise<boolean> {
    return this.keys.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [FIRST_KEY_LOCK]);
      const [{ count }] = await manager.query<Array<{ count: number }>>('SELECT count(*)::int AS count FROM api_keys');
      if (count > 0) return false;
      await manager.query(`INSERT INTO api_keys (id, store_id, name, scopes, key_hash) VALUES ($1, $2, $3, $4, $5)`, [
        key.id,
        key.storeId,
        key.name,
        key.scopes,
        key.keyHash,
      ]);
      return true;
    });
  }

  findInStore(storeId: string, id: string): Promise<ApiKey | null> {
    return this.keys.findOne({ where: { id, storeId } });
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
