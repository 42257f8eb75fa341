import { Client } from 'pg';
import { idFloor } from '../../common/ids';
import { retentionFloor } from '../retention/partition-plan';
import { sqlIdFloor, sqlRetentionFloor } from './sql-id-floor';

/** The SQL bounds against the ones this process computes, on a real PostgreSQL. */
describe('sqlIdFloor', () => {
  let client: Client;

  beforeAll(async () => {
    client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
  });

  afterAll(async () => {
    await client.end();
  });

  it('writes the same id floor as idFloor, for any time', async () => {
    const times = [0, 1, 31, 32, 1_000, Date.parse('2026-11-25T10:00:00.123Z'), Date.now(), 2 ** 47 + 12_345];
    for (const ms of times) {
      const { rows } = await client.query<{ floor: string }>(`SELECT ${sqlIdFloor('del', '$1::timestamptz')} AS floor`, [
        new Date(ms).toISOString(),
      ]);
      expect(rows[0].floor).toBe(idFloor('del', ms));
    }
  });

  it('bounds retention on the database clock, and not at all with retention off', async () => {
    const { rows } = await client.query<{ floor: string; now: Date }>(
      `SELECT ${sqlRetentionFloor('evt', '$1')} AS floor, now() AS now, ${sqlRetentionFloor('evt', '$2')} AS off`,
      [30, 0],
    );
    const [row] = rows as Array<{ floor: string; now: Date; off: string }>;
    expect(row.floor).toBe(retentionFloor('evt_', row.now.getTime(), 30));
    expect(row.off).toBe('evt_');
  });
});
