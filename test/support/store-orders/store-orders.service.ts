import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventPublisher, type PublishedEvent } from '../../../src/events/event-publisher';

export interface PlacedOrder {
  id: string;
  orderNumber: string;
  total: number;
  currency: string;
}

/**
 * An example of how another module of the platform publishes events: inject EventPublisher and
 * publish inside the same transaction as the change the event describes. If the transaction
 * rolls back, the event and its deliveries roll back with it, and nobody is told about an order
 * that does not exist (transactional outbox).
 */
@Injectable()
export class StoreOrdersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventPublisher,
  ) {}

  placeOrder(storeId: string, order: PlacedOrder): Promise<PublishedEvent> {
    return this.dataSource.transaction(async (manager) => {
      // A real orders module writes the order here, with the same `manager`.
      return this.events.publish(storeId, 'order.created', { ...order, status: 'PENDING' }, { manager });
    });
  }
}
