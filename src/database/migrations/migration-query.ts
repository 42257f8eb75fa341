/** A statement run in a migration's transaction, typed by the rows it answers. */
export type Query = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;
