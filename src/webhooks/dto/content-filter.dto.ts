import { ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateBy, ValidateIf } from 'class-validator';
import { filterShapeProblems, MAX_FILTER_BYTES } from '../content-filter';

/** The same rule, written once for the endpoint and for POST /webhooks/filter-test (PostgreSQL parses it after). */
export const IsFilterText = (nullable = true): PropertyDecorator =>
  ValidateBy({
    name: 'contentFilter',
    validator: {
      validate: (value: unknown) => filterShapeProblems(value, nullable).length === 0,
      defaultMessage: (args) => filterShapeProblems(args!.value, nullable).join('; '),
    },
  });

export const FILTER_EXAMPLE = '$.data.total > 10000 && $.data.currency == "EUR"';

/** An endpoint's content filter, set on create and changed or cleared (null) with PUT. */
export class ContentFilterDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MAX_FILTER_BYTES,
    example: FILTER_EXAMPLE,
    description:
      'A SQL/JSON path predicate over the envelope (PostgreSQL jsonb_path_match syntax), at most 1 KiB. Only events it matches are ' +
      'delivered to this endpoint; an event it does not match creates no delivery here, and no failure. A filter that does not parse ' +
      'is refused (400) with the parser’s message. null (the default): every event of the subscribed types. See docs/api.md#content-filters.',
  })
  @ValidateIf((_dto: object, value: unknown) => value !== undefined && value !== null)
  @IsFilterText()
  filter?: string | null;
}
