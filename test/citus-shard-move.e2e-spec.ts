import { Client } from 'pg';
import { startApp, type TestApp } from './support/app';
import { adminUrlOf } from './support/database';
import { eventually } from './support/eventually';
import { createWebhook, orderData } from './support/fixtures';
import { Receiver } from './support/receiver';

/** Run by `npm run test:citus`, which points DATABASE_URL at the coordinator named by CITUS_URL. */
const onCluster = process.env.CITUS_URL ? describe : describe.skip;

const BATCHES = 40;
const BATCH_SIZE = 25;

/**
 * On a Citus cluster, the shards holding a store move to the other worker node
 * (`citus_move_shard_placement`, as an operator rebalancing the cluster does) while its events are
 * published and delivered: every event reaches the receiver, and none twice but for an attempt
 * that was in flight when the move blocked its writes (at least once).
 */
onCluster('a store’s shards moved to another node while delivering', () => {
  let t: TestApp;
  let receiver: Receiver;
  let admin: Client;

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,500,1000,2000,4000' } });
    admin = new Client({ connectionString: adminUrlOf(t.db) });
    await admin.connect();
  }, 120_000);

  afterAll(async () => {
    await admin?.end();
    await t?.close();
    await receiver?.close();
  });

  /** The node holding the shard group of st_default, and the other one. */
  async function placement(): Promise<{ shard: string; host: string; port: number; other: { host: string; port: number } }> {
    const { rows } = await admin.query<{ shard: string; host: string; port: number }>(
      `SELECT s.shardid::text AS shard, n.nodename AS host, n.nodeport AS port
       FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid
       JOIN pg_dist_shard s ON s.shardid = p.shardid
       WHERE s.shardid = get_shard_id_for_distribution_column('delivery_queue', 'st_default')`,
    );
    const { rows: others } = await admin.query<{ host: string; port: number }>(
      `SELECT nodename AS host, nodeport AS port FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND nodeport <> $1`,
      [rows[0].port],
    );
    return { ...rows[0], other: others[0] };
  }

  it('delivers every event published before, during and after the move, none twice beyond a retried attempt', async () => {
    const endpoint = await createWebhook(t, `${receiver.url}/moved`);
    const before = await placement();

    const accepted: string[] = [];
    const publishing = (async () => {
      for (let batch = 0; batch < BATCHES; batch++) {
        const events = Array.from({ length: BATCH_SIZE }, (_, i) => ({ type: 'order.created', data: orderData(batch * BATCH_SIZE + i) }));
        const res = await t.api('/events/batch', { method: 'POST', json: { events } });
        if (res.status !== 202) throw new Error(`batch ${batch}: ${res.status} ${await res.text()}`);
        const { data } = (await res.json()) as { data: Array<{ id: string }> };
        accepted.push(...data.map((event) => event.id));
      }
    })();

    // Once deliveries flow, move the store's shard group (its deliveries, events, endpoints…) with
    // writes blocked for the copy, the mode that needs no logical replication.
    await eventually(
      () => Promise.resolve(receiver.to('/moved').length),
      (n) => n > 50,
      { deadlineMs: 30_000, what: 'deliveries flowing' },
    );
    await admin.query(`SELECT citus_move_shard_placement($1::bigint, $2, $3, $4, $5, shard_transfer_mode => 'block_writes')`, [
      before.shard,
      before.host,
      before.port,
      before.other.host,
      before.other.port,
    ]);
    await publishing;

    const after = await placement();
    expect(after.port).toBe(before.other.port);
    expect(accepted).toHaveLength(BATCHES * BATCH_SIZE);

    await eventually(
      async () => (await t.db.query<{ left: number }>(`SELECT count(*)::int AS left FROM deliveries WHERE status <> 'succeeded'`))[0].left,
      (left) => left === 0,
      { deadlineMs: 60_000, what: 'every delivery succeeded' },
    );
    const received = new Map<string, number>();
    for (const request of receiver.to('/moved')) {
      const id = String(request.headers['x-webhook-id']);
      received.set(id, (received.get(id) ?? 0) + 1);
    }
    expect(accepted.filter((id) => !received.has(id))).toEqual([]);

    // A second request for an event only for a delivery that was attempted more than once.
    const attempts = new Map(
      (
        await t.db.query<{ event: string; attempts: number }>(
          `SELECT event_id AS event, attempt_count AS attempts FROM deliveries WHERE webhook_id = $1`,
          [endpoint.id],
        )
      ).map((row) => [row.event, row.attempts]),
    );
    const beyondRetries = [...received].filter(([id, times]) => times > (attempts.get(id) ?? 1));
    expect(beyondRetries).toEqual([]);
  }, 180_000);
});
