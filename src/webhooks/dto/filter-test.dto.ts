import { ApiProperty } from '@nestjs/swagger';
import { IsObject } from 'class-validator';
import { FILTER_EXAMPLE, IsFilterText } from './content-filter.dto';

/** POST /webhooks/filter-test: a filter and an event to try it on. */
export class FilterTestDto {
  @ApiProperty({ example: FILTER_EXAMPLE, description: 'The filter, as an endpoint would hold it (at most 1 KiB)' })
  @IsFilterText(false)
  filter: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: {
      id: 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t',
      type: 'order.created',
      timestamp: '2026-11-22T10:00:00.000Z',
      data: { id: 'ord_8c2f41d7', orderNumber: 'ORD-1042', status: 'PENDING', total: 14998, currency: 'EUR' },
    },
    description: 'The envelope as an endpoint receives it: {id, type, timestamp, data}',
  })
  @IsObject({ message: 'event must be an object: the envelope {id, type, timestamp, data}' })
  event: Record<string, unknown>;
}
