import type { Pool } from 'pg';
import { timeDigits } from '../../src/common/ids';
import { PartitionMaintenance } from '../../src/dispatch/retention/partition-maintenance';
import { DAY_MS, partitionName } from '../../src/dispatch/retention/partition-plan';

export interface FillDays {
  storeId: string;
  type: string;
  /** One delivery per endpoint per event. */
  webhookIds: string[];
  /** Finished deliveries in all, spread evenly over `days` (each with its event and one attempt). */
  deliveries: number;
  /** Days since 1970-01-01 (UTC). */
  days: number[];
  /** Also one attempt row per delivery. */
  attempts: boolean;
}

/**
 * Finished deliveries (95 % succeeded, 5 % failed) of past days, written with generate_series in
 * the layout the service writes: ids whose time digits are their event's time, so that each day's
 * rows land in that day's partitions. Answers the milliseconds it took.
 */
export async function fillDays(pool: Pool, spec: FillDays, log: (line: string) => void): Promise<number> {
  const started = performance.now();
  await new PartitionMaintenance(pool).ensureDays(spec.days);
  const endpoints = spec.webhookIds.length;
  const eventsPerDay = Math.ceil(spec.deliveries / endpoints / spec.days.length);
  const chunk = Math.max(1, Math.floor(250_000 / endpoints));
  for (const day of spec.days) {
    const step = DAY_MS / eventsPerDay;
    for (let from = 0; from < eventsPerDay; from += chunk) {
      const to = Math.min(eventsPerDay, from + chunk);
      // The time digits of each event of the chunk (its place in the day), computed here once.
      const digits = Array.from({ length: to - from }, (_, i) => timeDigits(Math.floor(day * DAY_MS + (from + i) * step)));
      const at = `to_timestamp(($2::double precision + (g - $3::int) * $4::double precision) / 1000)`;
      await pool.query(
        `INSERT INTO events (id, store_id, type, body, created_at)
         SELECT 'evt_' || d.digits[g - $3 + 1] || lpad(g::text, 16, '0'), $5, $6,
           '{"id":"evt_' || d.digits[g - $3 + 1] || lpad(g::text, 16, '0') || '","type":"' || $6 || '","data":{}}', ${at}
         FROM generate_series($3::int, $7::int - 1) AS g, (SELECT $1::text[] AS digits) AS d`,
        [digits, day * DAY_MS + from * step, from, step, spec.storeId, spec.type, to],
      );
      await pool.query(
        `INSERT INTO delivery_log (id, store_id, event_id, webhook_id, event_type, status, attempt_count,
           last_status_code, created_at, updated_at)
         SELECT 'del_' || d.digits[g - $3 + 1] || lpad((g * $8 + k)::text, 16, '0'), $5,
           'evt_' || d.digits[g - $3 + 1] || lpad(g::text, 16, '0'), ($9::text[])[k + 1], $6,
           CASE WHEN (g * $8 + k) % 20 = 0 THEN 'failed' ELSE 'succeeded' END, 1,
           CASE WHEN (g * $8 + k) % 20 = 0 THEN 500 ELSE 200 END, ${at}, ${at}
         FROM generate_series($3::int, $7::int - 1) AS g, generate_series(0, $8::int - 1) AS k, (SELECT $1::text[] AS digits) AS d`,
        [digits, day * DAY_MS + from * step, from, step, spec.storeId, spec.type, to, endpoints, spec.webhookIds],
      );
      if (spec.attempts) {
        await pool.query(
          `INSERT INTO delivery_attempts (delivery_id, store_id, number, started_at, duration_ms, status_code, response_body)
           SELECT 'del_' || d.digits[g - $3 + 1] || lpad((g * $6 + k)::text, 16, '0'), $5, 1, ${at}, 3,
             CASE WHEN (g * $6 + k) % 20 = 0 THEN 500 ELSE 200 END, '{"received":true}'
           FROM generate_series($3::int, $7::int - 1) AS g, generate_series(0, $6::int - 1) AS k, (SELECT $1::text[] AS digits) AS d`,
          [digits, day * DAY_MS + from * step, from, step, spec.storeId, endpoints, to],
        );
      }
    }
    log(
      `  day ${new Date(day * DAY_MS).toISOString().slice(0, 10)}: ${eventsPerDay * endpoints} finished deliveries (${Math.round((performance.now() - started) / 1000)} s)`,
    );
  }
  // Only the filled days: an empty partition analyzed is known to be empty (docs/operations.md#retention).
  for (const table of ['events', 'delivery_log', 'delivery_attempts'] as const) {
    for (const day of spec.days) await pool.query(`VACUUM ANALYZE ${partitionName(table, day)}`);
  }
  return Math.round(performance.now() - started);
}
