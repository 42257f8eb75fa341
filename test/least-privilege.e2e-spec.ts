import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { SqlPool } from '../src/database/sql-pool';
import { DISPATCH_POOL } from '../src/dispatch/store/dispatch-pool';
import { PartitionMaintenance } from '../src/dispatch/retention/partition-maintenance';
import { DAY_MS, dayOf } from '../src/dispatch/retention/partition-plan';
import { RetentionScheduler } from '../src/dispatch/retention/retention-scheduler';
import { startApp, TestApp } from './support/app';
import { APP_ROLE } from './support/database';
import { eventually } from './support/eventually';
import { createWebhook, deliveriesOf, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * Hookline on a real PostgreSQL (DATABASE_URL) as a role that is no superuser and owns its
 * database, as docs/operations.md tells an operator to set it up (every e2e spec runs the app
 * so): it migrates, delivers and keeps its day partitions with nothing more, and on each of its
 * connections the server's files and programs are out of reach.
 */
describe('Hookline on DATABASE_URL with a role that is no superuser', () => {
  let t: TestApp;
  let receiver: Receiver;
  let connections: Array<{ name: string; query: (sql: string) => Promise<unknown> }>;

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp();
    const dataSource = t.app.get(DataSource);
    const dispatch = t.app.get<Pool>(DISPATCH_POOL);
    const sql = t.app.get(SqlPool);
    connections = [
      { name: 'TypeORM', query: (text) => dataSource.query(text) },
      { name: 'dispatcher', query: async (text) => (await dispatch.query<Record<string, unknown>>(text)).rows },
      { name: 'hot statements', query: async (text) => (await sql.query<Record<string, unknown>>(text)).rows },
    ];
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('connects as that role, which owns every table of Hookline’s and nothing outside its database', async () => {
    for (const { query } of connections) {
      expect(await query('SELECT current_user AS role, rolsuper FROM pg_roles WHERE rolname = current_user')).toEqual([
        { role: APP_ROLE, rolsuper: false },
      ]);
    }
    const tables = await t.db.query<{ name: string; owner: string }>(
      `SELECT relname AS name, pg_get_userbyid(relowner) AS owner FROM pg_class
       WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p', 'v')`,
    );
    expect(tables.map((table) => table.name)).toEqual(
      expect.arrayContaining(['webhooks', 'delivery_queue', 'delivery_log', 'deliveries', 'delivery_attempts', 'settings']),
    );
    expect(tables.filter((table) => table.owner !== APP_ROLE)).toEqual([]);
  });

  it('is refused pg_read_file, COPY … PROGRAM, server files and large-object imports on each of its connections', async () => {
    // PostgreSQL 15 words some of these "must be superuser or have privileges of …".
    const refused: Record<string, RegExp> = {
      [`SELECT pg_read_file('/etc/shadow')`]: /permission denied for function pg_read_file/,
      [`SELECT pg_ls_dir('/')`]: /permission denied for function pg_ls_dir/,
      [`COPY (SELECT 1) TO PROGRAM 'id'`]: /to COPY to or from an external program/,
      [`COPY settings TO '/tmp/hookline-settings'`]: /to COPY to a file/,
      [`SELECT lo_import('/etc/passwd')`]: /permission denied for function lo_import/,
      [`CREATE ROLE intruder`]: /permission denied to create role/,
    };
    for (const { name, query } of connections) {
      for (const [statement, message] of Object.entries(refused)) {
        const error = await query(statement).then(
          () => undefined,
          (failure: Error) => failure.message,
        );
        expect({ connection: name, statement, error }).toEqual({ connection: name, statement, error: expect.stringMatching(message) });
      }
    }
  });

  it('delivers, and creates and drops its day partitions, with nothing more', async () => {
    const endpoint = await createWebhook(t, `${receiver.url}/hook`);
    await publish(t, 'order.created', orderData(1));
    const [request] = await receiver.waitFor(1, (r) => r.path === '/hook');
    expect(request.headers['x-webhook-signature']).toBeDefined();
    await eventually(
      () => deliveriesOf(t, endpoint.id),
      ([only]) => only?.status === 'succeeded',
    );

    // A day past RETENTION_DAYS=30 and a settled one made by hand, then a run ten days ahead of the
    // clock: days ahead are created and attached, the old one detached and dropped, the settled
    // one's indexes rebuilt, all as the app's role.
    const today = dayOf(Date.now());
    const pool = new Pool({ connectionString: t.db.url, max: 1 });
    try {
      await new PartitionMaintenance(pool).ensureDays([today - 45, today - 3]);
    } finally {
      await pool.end();
    }
    const later = Date.now() + 10 * DAY_MS;
    const report = await t.app.get(RetentionScheduler).run(later);
    expect(report?.ran).toBe(true);
    expect(report?.created.map((c) => c.day)).toContain(dayOf(later));
    expect(report?.dropped.map((d) => [d.table, d.day])).toEqual([
      ['delivery_attempts', today - 45],
      ['delivery_log', today - 45],
      ['events', today - 45],
    ]);
    expect(report?.compacted.map((c) => c.reason)).toEqual(Array(5).fill('packed once its day settled'));
  });
});
