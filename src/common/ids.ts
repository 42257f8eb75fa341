import { randomBytes } from 'node:crypto';

export type IdPrefix = 'st' | 'wh' | 'evt' | 'del' | 'key';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

function encode(value: bigint, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/**
 * A prefixed, time-ordered id (`wh_01jd3…`): 48 bits of milliseconds then 80 random bits, in the
 * layout of a ULID. Ids sort by creation time, so lists page by id alone.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  const random = BigInt(`0x${randomBytes(10).toString('hex')}`);
  return `${prefix}_${encode(BigInt(now), 10)}${encode(random, 16)}`;
}
