import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class CreateStoreDto {
  @ApiProperty({ example: 'Acme Outdoor', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200, { message: 'name must be 1 to 200 characters' })
  name: string;
}
