import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { decimalInteger, PageQueryDto } from './pagination';

function problemsOf(query: Record<string, unknown>): string[] {
  const errors = validateSync(plainToInstance(PageQueryDto, query));
  return [...new Set(errors.flatMap((error) => Object.values(error.constraints ?? {})))];
}

describe('decimalInteger', () => {
  it.each([
    ['1', 1],
    ['50', 50],
    ['007', 7],
    ['200', 200],
  ])('reads %j as %i', (value, expected) => {
    expect(decimalInteger({ value })).toBe(expected);
  });

  it.each(['0x2', '0b11', '0o7', '1e1', '2.0', ' 7', '7 ', '+5', '-1', '', 'Infinity', '１２'])('leaves %j as it came', (value) => {
    expect(decimalInteger({ value })).toBe(value);
  });

  it('leaves what is not a string alone (a repeated parameter is an array)', () => {
    expect(decimalInteger({ value: ['1', '2'] })).toEqual(['1', '2']);
  });
});

describe('PageQueryDto', () => {
  it('accepts a limit of plain decimal digits from 1 to 200', () => {
    expect(problemsOf({ limit: '1' })).toEqual([]);
    expect(problemsOf({ limit: '200' })).toEqual([]);
    expect(plainToInstance(PageQueryDto, { limit: '42' }).limit).toBe(42);
  });

  it.each(['0x2', '1e1', '0b11', '2.0', ' 7', '0', '201', 'abc', ''])('refuses limit=%j with one sentence', (limit) => {
    expect(problemsOf({ limit })).toEqual(['limit must be an integer from 1 to 200 in plain decimal digits']);
  });
});
