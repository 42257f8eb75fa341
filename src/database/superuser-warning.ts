import { Logger } from '@nestjs/common';

type Query = (sql: string) => Promise<Array<{ role: string; superuser: boolean }>>;

/**
 * Warns once at start when Hookline's connection is a superuser's. Hookline needs none of that
 * power, and with it any SQL that reached the connection could read the server's files or run
 * programs on it; docs/operations.md says what role to give it instead. True when it warned.
 */
export async function warnIfSuperuser(query: Query, logger: Pick<Logger, 'warn'> = new Logger('Database')): Promise<boolean> {
  const [{ role, superuser }] = await query(
    'SELECT current_user AS role, rolsuper AS superuser FROM pg_roles WHERE rolname = current_user',
  );
  if (!superuser) return false;
  logger.warn(
    `connected to PostgreSQL as the superuser ${role}: Hookline needs a role that owns its database and nothing more ` +
      '(docs/operations.md, "A role for Hookline")',
  );
  return true;
}
