import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Statement } from './sql';

/** The `*.sql.ts` files under `root`, recursively, in a stable order. */
export function statementFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.sql.ts'))
    .map((file) => join(root, file))
    .sort();
}

function isStatement(value: unknown): value is Statement {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Statement).name === 'string' &&
    typeof (value as Statement).text === 'string'
  );
}

/** Every statement a module exports, in its export order. */
export function statementsOf(module: Record<string, unknown>): Statement[] {
  return Object.values(module).filter(isStatement);
}

/** The checked-in text of a module's statements: each under its name, as PostgreSQL receives it. */
export function snapshotText(statements: readonly Statement[]): string {
  return statements.map((statement) => `-- ${statement.name}\n${statement.text};\n`).join('\n');
}

/** The snapshot file beside `foo.sql.ts`: `foo.snapshot.sql` (not `foo.sql`, which an import of `./foo.sql` would find first). */
export function snapshotPath(sqlModule: string): string {
  return sqlModule.replace(/\.sql\.ts$/, '.snapshot.sql');
}

/** What a snapshot holds now, or null when it has none yet. */
export function readSnapshot(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
