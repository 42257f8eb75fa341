import { filterShapeProblems, filterVariables, inputRefusal, MAX_FILTER_BYTES, MAY_RAISE, passesFilter } from './content-filter';

describe('filterShapeProblems', () => {
  it('accepts a string of up to 1 KiB', () => {
    expect(filterShapeProblems('$.data.total > 10000')).toEqual([]);
    expect(filterShapeProblems('x'.repeat(MAX_FILTER_BYTES))).toEqual([]);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const [problem] = filterShapeProblems(`$.data.name == "${'é'.repeat(510)}"`);
    expect(problem).toMatch(/^filter must be .* at most 1024 bytes, or null; this one has 1037 bytes$/);
  });

  it('refuses what is not a string, naming the field', () => {
    expect(filterShapeProblems(42)).toEqual(['filter must be a SQL/JSON path predicate of at most 1024 bytes, or null']);
    expect(filterShapeProblems({ total: 1 })).toHaveLength(1);
    expect(filterShapeProblems(undefined, false)).toEqual(['filter must be a SQL/JSON path predicate of at most 1024 bytes']);
  });
});

describe('filterVariables', () => {
  it('finds none in a filter of paths and literals', () => {
    expect(filterVariables('($."data"."total" > 10000 && $."data"."currency" == "EUR")')).toEqual([]);
  });

  it('finds a variable wherever it stands, in PostgreSQL’s printing', () => {
    expect(filterVariables('exists ($."a"?(@ == $"x"))')).toEqual(['$"x"']);
    expect(filterVariables('($"min" < $."total" && $"z w" == 1)')).toEqual(['$"min"', '$"z w"']);
  });

  it('ignores a dollar sign inside a string, escaped quotes included', () => {
    expect(filterVariables('$."b" == "q\\"$y" && $."c" == "$\\"z\\""')).toEqual([]);
  });
});

describe('passesFilter', () => {
  it('lets an endpoint without a filter take every event', () => {
    expect(passesFilter('w', 'ev.envelope')).toMatch(/^\(w\.filter_path IS NULL OR /);
  });

  it('takes the guarded evaluation only for a filter that may raise, the inline one otherwise', () => {
    const sql = passesFilter('w', 'ev.envelope');
    expect(sql).toContain(`WHEN w.filter ~* '${MAY_RAISE}'\n    THEN hookline_filter_matches(ev.envelope, w.filter_path)`);
    expect(sql).toContain(`ELSE jsonb_path_match_tz(ev.envelope, w.filter_path, '{}', true) IS TRUE END`);
  });
});

describe('MAY_RAISE', () => {
  // The same pattern as PostgreSQL reads it (~*): these escapes mean the same in both.
  const mayRaise = (filter: string): boolean => new RegExp(MAY_RAISE, 'i').test(filter);

  it('names methods given arguments and regular expressions', () => {
    expect(mayRaise('$.timestamp.datetime("XYZ Q") < "2030-01-01".datetime()')).toBe(true);
    expect(mayRaise('$.a.datetime ( "YYYY" ) > 1')).toBe(true);
    expect(mayRaise('$.data.name like_regex "^A" flag "i"')).toBe(true);
  });

  it('leaves comparisons and methods without arguments inline', () => {
    expect(mayRaise('$.data.total > 0 && $.data.currency == "EUR"')).toBe(false);
    expect(mayRaise('$.data.at.datetime() < "2030-01-01".datetime() && $.data.n.double() > 1')).toBe(false);
  });
});

describe('inputRefusal', () => {
  it('gives PostgreSQL’s message, and its detail, for a refused input', () => {
    expect(inputRefusal({ code: '42601', message: 'syntax error at end of jsonpath input' })).toBe('syntax error at end of jsonpath input');
    expect(
      inputRefusal({
        driverError: {
          code: '42601',
          message: 'invalid input syntax for type jsonpath',
          detail: 'Unrecognized flag character "z" in LIKE_REGEX predicate.',
        },
      }),
    ).toBe('invalid input syntax for type jsonpath (Unrecognized flag character "z" in LIKE_REGEX predicate)');
    expect(inputRefusal({ code: '2201B', message: 'invalid regular expression: parentheses () not balanced' })).toMatch(/^invalid regular/);
  });

  it('leaves other errors to be thrown', () => {
    expect(inputRefusal({ code: '08006', message: 'connection failure' })).toBeUndefined();
    expect(inputRefusal(new Error('Connection terminated'))).toBeUndefined();
  });
});
