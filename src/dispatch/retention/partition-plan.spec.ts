import { newId } from '../../common/ids';
import { DAY_MS, dayBounds, dayOf, dayOfPartition, partitionName, planPartitions, retentionFloor } from './partition-plan';

const NOON_25_NOV = Date.UTC(2026, 10, 25, 12);
const TODAY = dayOf(NOON_25_NOV);

describe('partition plan', () => {
  it('names a partition after its UTC day and reads the day back', () => {
    expect(partitionName('events', TODAY)).toBe('events_p20261125');
    expect(dayOfPartition('events', 'events_p20261125')).toBe(TODAY);
    expect(dayOfPartition('delivery_log', 'delivery_log_p_low')).toBeNull();
    expect(dayOfPartition('delivery_log', 'delivery_attempts_p20261125')).toBeNull();
  });

  it('bounds a day so that every id made in it, and no other, falls inside', () => {
    const { from, to } = dayBounds('evt_', TODAY);
    for (const ms of [TODAY * DAY_MS, NOON_25_NOV, (TODAY + 1) * DAY_MS - 1]) {
      const id = newId('evt', ms);
      expect(id >= from && id < to).toBe(true);
    }
    expect(newId('evt', TODAY * DAY_MS - 1) < from).toBe(true);
    expect(newId('evt', (TODAY + 1) * DAY_MS) >= to).toBe(true);
  });

  it('creates today and the days ahead that are missing', () => {
    expect(planPartitions([TODAY, TODAY + 1], NOON_25_NOV, 30, 3).create).toEqual([TODAY + 2, TODAY + 3]);
    expect(planPartitions([], NOON_25_NOV, 0, 0).create).toEqual([TODAY]);
  });

  it('drops, oldest first, only days whose end is more than the retention behind now', () => {
    const existing = [TODAY - 2, TODAY - 40, TODAY - 31, TODAY - 30, TODAY];
    // With 30 days at noon: day -31 ended 30.5 days ago, day -30 only 29.5 days ago.
    expect(planPartitions(existing, NOON_25_NOV, 30, 0).drop).toEqual([TODAY - 40, TODAY - 31]);
    expect(planPartitions(existing, NOON_25_NOV, 1, 0).drop).toEqual([TODAY - 40, TODAY - 31, TODAY - 30, TODAY - 2]);
  });

  it('drops nothing when retention is off', () => {
    expect(planPartitions([TODAY - 4000, TODAY - 40], NOON_25_NOV, 0, 7).drop).toEqual([]);
  });

  it('sets the retention floor at the id made exactly the retention ago, below every id when off', () => {
    expect(retentionFloor('del_', NOON_25_NOV, 30)).toBe(`del_${newId('del', NOON_25_NOV - 30 * DAY_MS).slice(4, 14)}`);
    expect(retentionFloor('del_', NOON_25_NOV, 0)).toBe('del_');
    expect(newId('del', NOON_25_NOV - 30 * DAY_MS - 1) < retentionFloor('del_', NOON_25_NOV, 30)).toBe(true);
  });
});
