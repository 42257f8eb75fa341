import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, Repository } from 'typeorm';
import { Store } from './store.entity';

@Injectable()
export class StoreRepository {
  constructor(@InjectRepository(Store) private readonly stores: Repository<Store>) {}

  async insert(id: string, name: string): Promise<Store> {
    const rows: Store[] = await this.stores.query(
      `INSERT INTO stores (id, name) VALUES ($1, $2) RETURNING id, name, created_at AS "createdAt"`,
      [id, name],
    );
    return rows[0];
  }

  exists(id: string): Promise<boolean> {
    return this.stores.exists({ where: { id } });
  }

  /** Newest first, `limit + 1` rows so the caller knows whether there is a next page. */
  page(limit: number, beforeId?: string): Promise<Store[]> {
    return this.stores.find({
      where: beforeId ? { id: LessThan(beforeId) } : {},
      order: { id: 'DESC' },
      take: limit + 1,
    });
  }
}
