// Retry schedules as people write and read them: `0, 5 s, 5 min, 30 min` for the API's
// [0, 5000, 300000, 1800000]. One unit per delay, so what is shown can be typed back unchanged.

/** @type {[string, number][]} */
const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1_000],
];

/**
 * A delay in the largest unit it is a whole number of (`5 min`, `90 s`, `1500 ms`); 0 as `0`.
 * @param {number} ms
 */
export function formatDelay(ms) {
  if (ms === 0) return '0';
  const [unit, size] = UNITS.find(([, size]) => ms % size === 0) ?? ['ms', 1];
  return `${ms / size} ${unit}`;
}

/**
 * The schedule as a list of delays, or undefined for the deployment's (`null` in the API).
 * @param {number[] | null | undefined} schedule
 */
export function scheduleText(schedule) {
  return schedule ? schedule.map(formatDelay).join(', ') : undefined;
}

/** @type {Record<string, number>} */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)?$/i;

/**
 * Reads what `scheduleText` writes, and the server's RETRY_SCHEDULE_MS form (`0,5s,5m`): a bare
 * number is ms. Answers {delays} or {error}; empty text is the deployment's schedule (null). The
 * rules on the delays themselves (first 0, at most 7 days) are the server's to check.
 * @param {string} text
 * @returns {{ delays: number[] | null } | { error: string }}
 */
export function parseSchedule(text) {
  if (!text.trim()) return { delays: null };
  const parts = text.split(',').map((part) => part.trim());
  const delays = [];
  for (const part of parts) {
    const match = DURATION.exec(part);
    if (!match) return { error: `"${part}" is not a delay: write a number with ms, s, min, h or d (a bare number is ms).` };
    delays.push(Math.round(Number(match[1]) * UNIT_MS[(match[2] ?? 'ms').toLowerCase()]));
  }
  return { delays };
}
