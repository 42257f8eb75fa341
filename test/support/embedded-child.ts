/** Starts an embedded PostgreSQL in argv[2], prints its URL, and waits to be killed (SIGTERM stops the server first). */
import { EmbeddedPostgres } from '../../src/database/embedded-postgres';

EmbeddedPostgres.start(process.argv[2], { info: () => undefined, warn: () => undefined })
  .then((server) => {
    process.stdout.write(`${server.url}\n`);
    setInterval(() => undefined, 60_000);
    process.once('SIGTERM', () => void server.stop().finally(() => process.exit(0)));
  })
  .catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
