import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsString, Length } from 'class-validator';
import { SCOPES, type Scope } from '../scopes';
import { IsSafeName, NAME_RULES } from '../../common/safe-text';

export class CreateApiKeyDto {
  @ApiProperty({ example: 'ERP integration', minLength: 1, maxLength: 200, description: NAME_RULES })
  @IsString()
  @Length(1, 200, { message: 'name must be 1 to 200 characters' })
  @IsSafeName()
  name: string;

  @ApiProperty({ enum: SCOPES, isArray: true, example: ['webhooks:read', 'webhooks:write'] })
  @IsArray({ message: 'scopes must be an array of scopes' })
  @ArrayMinSize(1, { message: 'scopes must name at least one scope' })
  @ArrayMaxSize(SCOPES.length)
  @ArrayUnique({ message: 'scopes must not repeat a scope' })
  @IsIn(SCOPES, { each: true, message: `each scope must be one of: ${SCOPES.join(', ')}` })
  scopes: Scope[];
}
