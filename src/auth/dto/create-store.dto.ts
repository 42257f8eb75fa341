import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { IsSafeName, NAME_RULES } from '../../common/safe-text';

export class CreateStoreDto {
  @ApiProperty({ example: 'Acme Outdoor', minLength: 1, maxLength: 200, description: NAME_RULES })
  @IsString()
  @Length(1, 200, { message: 'name must be 1 to 200 characters' })
  @IsSafeName()
  name: string;
}
