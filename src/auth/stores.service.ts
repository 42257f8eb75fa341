import { Injectable } from '@nestjs/common';
import { newId } from '../common/ids';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, PageQueryDto, toPage } from '../common/pagination';
import { StoreResponse } from './dto/store.response';
import { StoreRepository } from './store.repository';

@Injectable()
export class StoresService {
  constructor(private readonly stores: StoreRepository) {}

  async create(name: string): Promise<StoreResponse> {
    return StoreResponse.of(await this.stores.insert(newId('st'), name));
  }

  async list(query: PageQueryDto): Promise<Page<StoreResponse>> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.stores.page(limit, decodeCursor(query.cursor));
    return toPage(rows, limit, (store) => StoreResponse.of(store));
  }
}
