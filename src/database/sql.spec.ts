import { poolSql, rowsOf, statement, typeormSql } from './sql';
import { snapshotPath, snapshotText, statementsOf } from './sql-snapshots';

describe('statement', () => {
  it('keeps a name and the text without its common indentation', () => {
    const s = statement(
      'pick',
      `
      SELECT 1
        FROM t   
      WHERE a = $1`,
    );
    expect(s).toEqual({ name: 'pick', text: 'SELECT 1\n  FROM t\nWHERE a = $1' });
    expect(Object.isFrozen(s)).toBe(true);
  });
});

describe('poolSql', () => {
  it('runs a statement prepared under its name, with its values', async () => {
    const query = jest.fn().mockResolvedValue({ rows: [{ a: 1 }] });
    const rows = await poolSql({ query } as never).rows(statement('pick', 'SELECT $1::int AS a'), [1]);
    expect(rows).toEqual([{ a: 1 }]);
    expect(query).toHaveBeenCalledWith({ name: 'hookline-pick', text: 'SELECT $1::int AS a', values: [1] });
  });
});

describe('typeormSql and rowsOf', () => {
  it('answers the rows of an UPDATE, which TypeORM wraps with its count', async () => {
    const query = jest.fn().mockResolvedValue([[{ id: 'x' }], 1]);
    await expect(typeormSql({ query }).rows(statement('touch', 'UPDATE t SET a = 1 RETURNING id'))).resolves.toEqual([{ id: 'x' }]);
    expect(query).toHaveBeenCalledWith('UPDATE t SET a = 1 RETURNING id', []);
  });

  it('answers the rows of a SELECT as they come', async () => {
    await expect(rowsOf({ query: jest.fn().mockResolvedValue([{ a: 1 }, { a: 2 }]) }, 'SELECT')).resolves.toEqual([{ a: 1 }, { a: 2 }]);
  });
});

describe('SQL snapshots', () => {
  it('lists a module’s statements under their names, and sits beside it as .snapshot.sql', () => {
    const module = { A: statement('a', 'SELECT 1'), B: statement('b', 'SELECT 2'), LIMIT: 5 };
    expect(statementsOf(module).map((s) => s.name)).toEqual(['a', 'b']);
    expect(snapshotText(statementsOf(module))).toBe('-- a\nSELECT 1;\n\n-- b\nSELECT 2;\n');
    expect(snapshotPath('/x/store/delivery-log.sql.ts')).toBe('/x/store/delivery-log.snapshot.sql');
  });
});
