import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsISO8601, IsOptional } from 'class-validator';

export class ReplayDto {
  @ApiProperty({
    example: '2026-11-22T00:00:00.000Z',
    description:
      "Replay events published at or after this time (ISO 8601, with its offset), such as a previous answer's `next`; before now. " +
      'Reaches back no further than retention (RETENTION_DAYS)',
  })
  @IsDefined({ message: 'since is required' })
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 date-time' })
  since: string;

  @ApiPropertyOptional({
    example: '2026-11-23T00:00:00.000Z',
    description: 'Up to, not including, this time (ISO 8601); later than since. Now when left out',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'until must be an ISO 8601 date-time' })
  until?: string;
}
