import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min, ValidateIf } from 'class-validator';

/** The longest overlap a rotation may keep: long enough for any deploy, short enough that a leaked secret dies. */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 60 * 60;

export class RotateSecretDto {
  @ApiPropertyOptional({
    default: 0,
    minimum: 0,
    maximum: MAX_SECRET_OVERLAP_SECONDS,
    example: 86_400,
    description:
      'How long the old secret keeps signing beside the new one, in seconds (at most 7 days). 0: it stops at once. ' +
      'During the overlap webhook-signature carries both signatures and X-Webhook-Signature keeps the old secret.',
  })
  @ValidateIf((_dto: object, value: unknown) => value !== undefined)
  @IsInt({ message: 'oldSecretExpiresInSeconds must be a whole number of seconds' })
  @Min(0, { message: `oldSecretExpiresInSeconds must be from 0 to ${MAX_SECRET_OVERLAP_SECONDS}` })
  @Max(MAX_SECRET_OVERLAP_SECONDS, { message: `oldSecretExpiresInSeconds must be from 0 to ${MAX_SECRET_OVERLAP_SECONDS}` })
  oldSecretExpiresInSeconds?: number;
}
