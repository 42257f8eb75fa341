import { BadRequestException } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/**
 * A query value of plain decimal digits as a number; anything else stays as it came and fails
 * `@IsInt`. `Number()` alone also reads `0x2`, `0b11`, `1e1`, ` 7` and `2.0` as integers.
 */
export function decimalInteger({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
}

const LIMIT_RULE = 'limit must be an integer from 1 to 200 in plain decimal digits';

/** `limit` and `cursor` of every list: limit 1–200 in plain decimal digits, default 50. */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50, description: 'Page size, in plain decimal digits' })
  @IsOptional()
  @Transform(decimalInteger)
  @IsInt({ message: LIMIT_RULE })
  @Min(1, { message: LIMIT_RULE })
  @Max(200, { message: LIMIT_RULE })
  limit?: number;

  @ApiPropertyOptional({ description: 'The `nextCursor` of the previous page (opaque)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

export const DEFAULT_PAGE_SIZE = 50;

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** Documents `{data, nextCursor}` for a given item type in the OpenAPI document. */
export function PageOf<T>(itemType: new () => T, name: string): new () => Page<T> {
  class PageDto {
    @ApiProperty({ type: itemType, isArray: true })
    data: T[];

    @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' })
    nextCursor: string | null;
  }
  Object.defineProperty(PageDto, 'name', { value: name });
  return PageDto;
}

/**
 * Cursors are opaque to clients: the base64url of the last id of the page. Ids are time-ordered,
 * so lists page newest first with `id < cursor`, which stays correct while rows are inserted.
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ after: lastId })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string' && /^[a-z]{2,3}_[0-9a-z]{1,64}$/.test(parsed.after)) return parsed.after;
  } catch {
    // fall through
  }
  throw new BadRequestException('cursor is invalid; pass the nextCursor of a previous page');
}

/** Builds a page from `limit + 1` rows fetched newest first. */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { data: items.map(map), nextCursor: more ? encodeCursor(items[items.length - 1].id) : null };
}
