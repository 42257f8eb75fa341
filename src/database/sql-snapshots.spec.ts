import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readSnapshot, snapshotPath, snapshotText, statementFiles, statementsOf } from './sql-snapshots';

/**
 * Every named statement of every `*.sql.ts` in src/ against its checked-in `.snapshot.sql`, so a
 * change to the SQL shows in review as SQL. `npm run sql:snapshots` rewrites the snapshots.
 */
const UPDATE = process.env.UPDATE_SQL_SNAPSHOTS === '1';
const SRC = join(__dirname, '..');

describe('SQL statement snapshots', () => {
  const files = statementFiles(SRC);

  it('finds the statement modules', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files.map((file) => [relative(SRC, file), file]))('%s matches its .sql snapshot', (_name, file) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const statements = statementsOf(require(file) as Record<string, unknown>);
    expect(statements.length).toBeGreaterThan(0);
    const names = statements.map((statement) => statement.name);
    expect(new Set(names).size).toBe(names.length);
    const text = snapshotText(statements);
    const path = snapshotPath(file);
    if (UPDATE) writeFileSync(path, text);
    const snapshot = readSnapshot(path);
    if (snapshot !== text) {
      throw new Error(`${relative(SRC, path)} is not the SQL of ${relative(SRC, file)}: run \`npm run sql:snapshots\` and review the diff`);
    }
  });

  it('names each statement once across the whole application (the names label prepared statements)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const names = files.flatMap((file) => statementsOf(require(file) as Record<string, unknown>).map((statement) => statement.name));
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
  });
});
