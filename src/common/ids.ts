import { randomFillSync } from 'node:crypto';

export type IdPrefix = 'st' | 'wh' | 'evt' | 'del' | 'key' | 'ps';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case
const RANDOM_DIGITS = 16;

/**
 * Random bytes drawn 4 KiB at a time (256 ids): one `randomBytes(10)` per id and BigInt digits
 * cost far more, and every event gets an id. Each random digit is the low 5 bits of its own byte,
 * so every digit is uniform.
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** `length` base32 digits of a non-negative integer below 2^53. */
function encode(value: number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

function randomDigits(): string {
  if (poolOffset + RANDOM_DIGITS > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let out = '';
  for (let i = 0; i < RANDOM_DIGITS; i++) out += ALPHABET[pool[poolOffset + i] & 31];
  poolOffset += RANDOM_DIGITS;
  return out;
}

/**
 * A prefixed, time-ordered id (`wh_01jd3…`): 48 bits of milliseconds then 80 random bits, in the
 * layout of a ULID. Ids sort by creation time, so lists page by id alone.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  return `${prefix}_${encode(now, 10)}${randomDigits()}`;
}

/**
 * The least id of `prefix` made at `ms` or later: ids compare as their times do, so a window of
 * time [a, b) is the id range [idFloor(a), idFloor(b)), which an index on id can serve.
 */
export function idFloor(prefix: IdPrefix, ms: number): string {
  // Ten digits hold 48 bits: times beyond them (year 10889) bound as the largest.
  return `${prefix}_${encode(Math.min(Math.max(ms, 0), 2 ** 48 - 1), 10)}`;
}

/** The ten time digits of an id made at `ms`: `newId(prefix, ms)` starts with `${prefix}_${timeDigits(ms)}`. */
export function timeDigits(ms: number): string {
  return encode(ms, 10);
}

/**
 * The milliseconds an id was made at, or null when its ten time digits are not base32 (an id
 * Hookline did not make).
 */
export function idTime(id: string): number | null {
  const digits = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11);
  if (digits.length !== 10) return null;
  let value = 0;
  for (const digit of digits) {
    const position = ALPHABET.indexOf(digit);
    if (position < 0) return null;
    value = value * 32 + position;
  }
  return value;
}

/**
 * A new id with the time digits of `other`: a delivery's id carries its event's time, so that an
 * event, its deliveries and their attempts fall in the same day's partitions (docs/operations.md).
 */
export function newIdAtTimeOf(prefix: IdPrefix, other: string): string {
  const start = other.indexOf('_') + 1;
  return `${prefix}_${other.slice(start, start + 10)}${randomDigits()}`;
}
