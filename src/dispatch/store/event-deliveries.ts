/**
 * SQL that matches the rows of `deliveries` aliased `d` to the event aliased `e`. Every delivery's
 * id starts with its event's time (`del_` and the ten time digits of `evt_…`), so the primary key's
 * range of that time finds them, in the one partition of that day; deliveries have no index by
 * event (each entry would cost every delivery three index writes).
 */
export function deliveriesOfEvent(d: string, e: string): string {
  const time = `substr(${e}.id, 5, 10)`;
  return `${d}.id >= 'del_' || ${time} AND ${d}.id < 'del_' || ${time} || '~' AND ${d}.event_id = ${e}.id`;
}
