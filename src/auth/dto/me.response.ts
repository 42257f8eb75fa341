import { PickType } from '@nestjs/swagger';
import { ApiKeyResponse } from './api-key.response';

/** The calling key: who it is, which store it acts in and what it may do. */
export class MeResponse extends PickType(ApiKeyResponse, ['id', 'name', 'storeId', 'scopes'] as const) {}
