type Query = (sql: string) => Promise<Array<{ citus: boolean }>>;

/**
 * What the database under Hookline is, found once at start after the migrations: one PostgreSQL
 * server, or a Citus coordinator whose tables the migrations distributed on store_id
 * (docs/scaling.md, "Citus"). Statements that Citus plans differently (the claim, the result of
 * attempts, the statements that wake workers) choose their form by it; on one server nothing changes.
 */
export class DatabaseEngine {
  private constructor(readonly citus: boolean) {}

  static readonly plain = new DatabaseEngine(false);

  static async detect(query: Query): Promise<DatabaseEngine> {
    const [{ citus }] = await query(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`);
    return citus ? new DatabaseEngine(true) : DatabaseEngine.plain;
  }
}
