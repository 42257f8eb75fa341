import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

export interface StoredEvent {
  id: string;
  type: string;
  body: string;
  createdAt: Date;
}

/** How long an Idempotency-Key is remembered (CONTRACT §6). */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

@Injectable()
export class EventRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Inserts the event; with an idempotency key, returns false instead when the store already has
   * an event with that key from the last 24 hours (an older holder of the key gives it up).
   */
  async insert(
    manager: EntityManager,
    event: { id: string; storeId: string; type: string; body: string; createdAt: Date; idempotencyKey?: string },
  ): Promise<boolean> {
    if (event.idempotencyKey !== undefined) {
      await manager.query(
        `UPDATE events SET idempotency_key = NULL
         WHERE store_id = $1 AND idempotency_key = $2 AND created_at < now() - make_interval(hours => $3)`,
        [event.storeId, event.idempotencyKey, IDEMPOTENCY_WINDOW_HOURS],
      );
    }
    const rows: unknown[] = await manager.query(
      `INSERT INTO events (id, store_id, type, body, idempotency_key, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (store_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING id`,
      [event.id, event.storeId, event.type, event.body, event.idempotencyKey ?? null, event.createdAt.toISOString()],
    );
    return rows.length === 1;
  }

  /** The event holding an idempotency key, with its fan-out count. */
  async findByIdempotencyKey(manager: EntityManager, storeId: string, key: string): Promise<(StoredEvent & { deliveries: number }) | null> {
    const rows: Array<StoredEvent & { deliveries: number }> = await manager.query(
      `SELECT e.id, e.type, e.body, e.created_at AS "createdAt",
         (SELECT count(*)::int FROM deliveries d WHERE d.event_id = e.id) AS deliveries
       FROM events e WHERE e.store_id = $1 AND e.idempotency_key = $2`,
      [storeId, key],
    );
    return rows[0] ?? null;
  }

  async findInStore(storeId: string, id: string): Promise<StoredEvent | null> {
    const rows: StoredEvent[] = await this.dataSource.query(
      `SELECT id, type, body, created_at AS "createdAt" FROM events WHERE id = $1 AND store_id = $2`,
      [id, storeId],
    );
    return rows[0] ?? null;
  }

  /** Forgets idempotency keys past their window (a safety valve for the unique index's size). */
  async expireIdempotencyKeys(): Promise<void> {
    await this.dataSource.query(
      `UPDATE events SET idempotency_key = NULL
       WHERE idempotency_key IS NOT NULL AND created_at < now() - make_interval(hours => $1)`,
      [IDEMPOTENCY_WINDOW_HOURS],
    );
  }
}
