import { ApiProperty } from '@nestjs/swagger';

export class FilterTestResponse {
  @ApiProperty({ example: true, description: 'Whether an endpoint with this filter would be sent the event' })
  matches: boolean;
}
