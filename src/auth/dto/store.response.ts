import { ApiProperty } from '@nestjs/swagger';
import type { Store } from '../store.entity';

export class StoreResponse {
  @ApiProperty({ example: 'st_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  id: string;

  @ApiProperty({ example: 'Acme Outdoor' })
  name: string;

  @ApiProperty({ example: '2026-11-22T10:00:00.000Z' })
  createdAt: string;

  static of(store: Store): StoreResponse {
    return { id: store.id, name: store.name, createdAt: store.createdAt.toISOString() };
  }
}
