import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional } from 'class-validator';

export class RetryFailedDto {
  @ApiPropertyOptional({
    example: '2026-11-22T00:00:00.000Z',
    description:
      "Only deliveries of events published at or after this time (ISO 8601), such as a previous answer's `next`; all failed ones when left out",
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 date-time' })
  since?: string;
}
