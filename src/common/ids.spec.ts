import { idFloor, idTime, newId, newIdAtTimeOf, timeDigits } from './ids';

const ID = /^evt_[0-9a-hjkmnp-tv-z]{26}$/;

describe('newId', () => {
  it('writes the prefix, ten base32 digits of milliseconds and sixteen random ones', () => {
    expect(newId('evt')).toMatch(ID);
    expect(newId('evt', 0).slice(0, 14)).toBe('evt_0000000000');
    expect(newId('evt', 2 ** 48 - 1).slice(0, 14)).toBe('evt_7zzzzzzzzz');
    // 2026-11-23T09:30:00.123Z = 1795426200123 ms, in base32 (Crockford, lower case).
    expect(newId('wh', Date.UTC(2026, 10, 23, 9, 30, 0, 123)).slice(0, 13)).toBe('wh_01m83vvahv');
  });

  it('sorts by creation time, whatever the random part', () => {
    const times = [0, 1, 31, 32, 1_000, 1_795_426_200_123, 1_795_426_200_124, 2 ** 48 - 1];
    const ids = times.map((time) => newId('del', time));
    expect([...ids].sort()).toEqual(ids);
  });

  it('never repeats itself, even within one millisecond', () => {
    const ids = new Set(Array.from({ length: 100_000 }, () => newId('evt', 1_795_426_200_123)));
    expect(ids.size).toBe(100_000);
  });

  it('draws every random digit evenly from the 32 symbols', () => {
    const counts = Array.from({ length: 16 }, () => new Map<string, number>());
    const n = 64_000;
    for (let i = 0; i < n; i++) {
      const random = newId('evt').slice(14);
      for (let position = 0; position < 16; position++) {
        const symbol = random[position];
        counts[position].set(symbol, (counts[position].get(symbol) ?? 0) + 1);
      }
    }
    for (const perPosition of counts) {
      expect(perPosition.size).toBe(32);
      // 2,000 expected per symbol; ±15 % is more than 6 standard deviations (σ ≈ 44).
      for (const count of perPosition.values()) expect(Math.abs(count - n / 32)).toBeLessThan(300);
    }
  });
});

describe('idFloor', () => {
  it('bounds the ids of a time window: made at the time or later sort at or above it, made before sort below', () => {
    const at = 1_795_426_200_123;
    expect(idFloor('evt', at)).toBe(newId('evt', at).slice(0, 14));
    for (let i = 0; i < 1_000; i++) {
      expect(newId('evt', at) >= idFloor('evt', at)).toBe(true);
      expect(newId('evt', at - 1) < idFloor('evt', at)).toBe(true);
      expect(newId('evt', at) < idFloor('evt', at + 1)).toBe(true);
    }
    expect(idFloor('evt', -5)).toBe('evt_0000000000');
    expect(idFloor('evt', 8.64e15)).toBe('evt_7zzzzzzzzz');
  });
});

describe('idTime and timeDigits', () => {
  it('read back the milliseconds an id was made at', () => {
    const ms = Date.UTC(2026, 10, 23, 9, 30, 0, 123);
    expect(idTime(newId('evt', ms))).toBe(ms);
    expect(timeDigits(ms)).toBe('01m83vvahv');
    expect(idTime('del_0000000000')).toBe(0);
  });

  it('answer null for an id Hookline did not make', () => {
    expect(idTime('evt_old000000000001')).toBeNull();
    expect(idTime('evt_x')).toBeNull();
  });

  it('give a new id the time digits of another', () => {
    const event = newId('evt', Date.UTC(2026, 0, 2));
    const delivery = newIdAtTimeOf('del', event);
    expect(delivery.slice(4, 14)).toBe(event.slice(4, 14));
    expect(delivery).toMatch(/^del_[0-9a-hjkmnp-tv-z]{26}$/);
  });
});
