/** The most a filter may hold, in UTF-8 bytes. */
export const MAX_FILTER_BYTES = 1024;

/** What is wrong with a filter as given, before PostgreSQL parses it (the DTOs' rule). */
export function filterShapeProblems(value: unknown, nullable = true): string[] {
  const rule = `filter must be a SQL/JSON path predicate of at most ${MAX_FILTER_BYTES} bytes${nullable ? ', or null' : ''}`;
  if (typeof value !== 'string') return [rule];
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_FILTER_BYTES) return [`${rule}; this one has ${bytes} bytes`];
  return [];
}

/**
 * The variables (`$name`) of a parsed filter, read in PostgreSQL's own printing of it, where every
 * variable is `$"name"` and every string a double-quoted JSON-style literal. Hookline passes no
 * variables, so a filter naming one could never be evaluated.
 */
export function filterVariables(canonical: string): string[] {
  const variables: string[] = [];
  let i = 0;
  while (i < canonical.length) {
    const char = canonical[i];
    if (char === '"') {
      i = endOfString(canonical, i);
    } else if (char === '$' && canonical[i + 1] === '"') {
      const end = endOfString(canonical, i + 1);
      variables.push(`$${canonical.slice(i + 1, end)}`);
      i = end;
    } else {
      i++;
    }
  }
  return variables;
}

/** The index just past the string literal opening at `start`. */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/**
 * SQL: whether the event `envelope` (jsonb, or null when no endpoint has a filter) passes the
 * filter of the endpoint `alias`. An endpoint without a filter takes every event of its types.
 */
export function passesFilter(alias: string, envelope: string): string {
  return `(${alias}.filter_path IS NULL OR CASE WHEN ${alias}.filter ~* '${MAY_RAISE}'
    THEN hookline_filter_matches(${envelope}, ${alias}.filter_path)
    ELSE jsonb_path_match_tz(${envelope}, ${alias}.filter_path, '{}', true) IS TRUE END)`;
}

/**
 * What a filter holds when evaluating it may raise even in silent mode: a method given arguments
 * (a datetime template PostgreSQL refuses only when it runs) or a regular expression. Only those
 * take hookline_filter_matches, whose exception block is a subtransaction per delivery; the others
 * are evaluated inline. A string literal that looks like one only costs the guard.
 */
export const MAY_RAISE = String.raw`\.[a-z_]+\s*\(\s*[^)\s]|like_regex`;

/**
 * SQL: the event's `body` (text) as jsonb, for {@link passesFilter}, parsed only when some
 * endpoint has a filter (one probe of a partial index a statement, not one a row).
 */
export function envelopeForFilters(body: string): string {
  return `CASE WHEN EXISTS (SELECT 1 FROM webhooks WHERE filter IS NOT NULL) THEN ${body}::jsonb END`;
}

/**
 * PostgreSQL's refusal of a filter or an event as input (SQLSTATE class 22, data, or 42, syntax),
 * in its own words with its detail; undefined for any other error, which is not the input's fault.
 */
export function inputRefusal(error: unknown): string | undefined {
  const candidate = error as { code?: unknown; message?: unknown; detail?: unknown; driverError?: unknown };
  const pg = (candidate.driverError ?? candidate) as { code?: unknown; message?: unknown; detail?: unknown };
  if (typeof pg.code !== 'string' || !/^(22|42)/.test(pg.code) || typeof pg.message !== 'string') return undefined;
  return typeof pg.detail === 'string' && pg.detail ? `${pg.message} (${pg.detail.replace(/\.$/, '')})` : pg.message;
}
