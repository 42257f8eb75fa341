import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../test/support/database';
import { dataSourceOptions } from '../database/data-source-options';
import { runMigrationsLocked } from '../database/run-migrations';
import { DeliveryLog } from './delivery-log.repository';

describe('DeliveryLog', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let log: DeliveryLog;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
    await runMigrationsLocked(dataSource);
    log = new DeliveryLog(dataSource);
    await db.query(`INSERT INTO stores (id, name) VALUES ('st_other', 'other')`);
    for (const [store, event] of [
      ['st_default', 'evt_1'],
      ['st_other', 'evt_2'],
    ]) {
      await db.query(`INSERT INTO events (id, store_id, type, body) VALUES ($1, $2, 'order.created', '{}')`, [event, store]);
      await db.query(
        `INSERT INTO webhooks (id, store_id, name, url, events, secret_encrypted) VALUES ($1, $2, 'w', 'https://x.test/', '{order.created}', 's')`,
        [`wh_${store}`, store],
      );
    }
    const rows: Array<[string, string, string, string]> = [
      ['del_1', 'st_default', 'evt_1', 'failed'],
      ['del_2', 'st_default', 'evt_1', 'succeeded'],
      ['del_3', 'st_default', 'evt_1', 'pending'],
      ['del_4', 'st_other', 'evt_2', 'failed'],
    ];
    for (const [id, store, event, status] of rows) {
      await db.query(
        `INSERT INTO deliveries (id, store_id, event_id, webhook_id, event_type, status, next_attempt_at)
         VALUES ($1, $2, $3, $4, 'order.created', $5, CASE WHEN $5 = 'pending' THEN now() + interval '1 hour' END)`,
        [id, store, event, `wh_${store}`, status],
      );
    }
  });

  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  it("reads only the caller's store", async () => {
    expect(await log.findInStore('st_default', 'del_4')).toBeNull();
    expect(await log.findInStore('st_other', 'del_4')).toMatchObject({ id: 'del_4', status: 'failed', body: '{}' });
    expect((await log.listForEvent('st_default', 'evt_2')).length).toBe(0);
    expect((await log.listForEvent('st_default', 'evt_1')).map((d) => d.id)).toEqual(['del_1', 'del_2', 'del_3']);
  });

  it('pages newest first with one row more than the limit, filtered by status', async () => {
    expect((await log.pageForWebhook('st_default', 'wh_st_default', { limit: 1 })).map((d) => d.id)).toEqual(['del_3', 'del_2']);
    expect((await log.pageForWebhook('st_default', 'wh_st_default', { limit: 5, beforeId: 'del_3' })).map((d) => d.id)).toEqual([
      'del_2',
      'del_1',
    ]);
    expect((await log.pageForWebhook('st_default', 'wh_st_default', { limit: 5, status: 'failed' })).map((d) => d.id)).toEqual(['del_1']);
  });

  it('restarts a finished delivery but not a pending one, and the failed ones of an endpoint in its store only', async () => {
    expect(await log.restart('st_default', 'del_3')).toBeNull();
    expect(await log.restart('st_default', 'del_2')).toMatchObject({ id: 'del_2', status: 'pending' });
    expect(await log.restartFailed('st_default', 'wh_st_other')).toBe(0);
    expect(await log.restartFailed('st_default', 'wh_st_default')).toBe(1);
    expect(await log.stateInStore('st_default', 'del_1')).toEqual({ status: 'pending', webhookId: 'wh_st_default' });
    expect(await log.stateInStore('st_other', 'del_4')).toEqual({ status: 'failed', webhookId: 'wh_st_other' });
  });
});
