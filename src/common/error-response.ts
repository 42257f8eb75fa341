import { ApiProperty } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';

/** The one error shape of the API. */
export class ErrorResponse {
  @ApiProperty({ example: 400 })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request' })
  error: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: ['url must be an https:// URL'],
  })
  message: string | string[];
}

export function errorBody(statusCode: number, message: string | string[]): ErrorResponse {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message };
}
