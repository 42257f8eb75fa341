import { ApiProperty } from '@nestjs/swagger';

/** What POST /webhooks/:id/test answers: the one attempt's outcome. */
export class TestDeliveryResponse {
  @ApiProperty({ example: true })
  success: boolean;

  @ApiProperty({ type: Number, nullable: true, example: 200 })
  statusCode: number | null;

  @ApiProperty({ example: 37 })
  durationMs: number;

  @ApiProperty({ type: String, nullable: true, example: null })
  error: string | null;

  @ApiProperty({ example: 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  eventId: string;

  @ApiProperty({ example: 'del_01jd5v1xkq8w3r0m6m2n4p7s9t' })
  deliveryId: string;
}
