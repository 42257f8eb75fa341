/** Most attempts a cycle may have. */
export const MAX_RETRY_ATTEMPTS = 30;
/** The longest a cycle may last, first attempt to last. */
export const MAX_RETRY_SPAN_MS = 7 * 24 * 60 * 60 * 1000;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;

/** `250`, `250ms`, `5s`, `5m`, `2h`, `1d` (a bare number is milliseconds) in whole ms, or undefined. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] ?? 'ms'];
  return Number.isSafeInteger(Math.round(ms)) ? Math.round(ms) : undefined;
}

/** A duration in the largest unit that holds it whole: `7d`, `90m`, `6s`, `1500ms`. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms > 0 && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * What is wrong with a schedule of delays (ms before each attempt; attempt 1's is 0), as
 * sentences naming `name`: the same rules for the deployment's and for an endpoint's own.
 */
export function retryScheduleProblems(name: string, delays: readonly number[]): string[] {
  if (delays.length < 1 || delays.length > MAX_RETRY_ATTEMPTS) return [`${name} must have 1 to ${MAX_RETRY_ATTEMPTS} entries`];
  if (delays.some((delay) => !Number.isSafeInteger(delay) || delay < 0)) return [`${name} entries must be whole milliseconds, 0 or more`];
  const problems: string[] = [];
  if (delays[0] !== 0) problems.push(`${name} must start with 0 (the first attempt goes out at once)`);
  if (delays.reduce((sum, delay) => sum + delay, 0) > MAX_RETRY_SPAN_MS) problems.push(`${name} must add up to at most 7 days`);
  return problems;
}

/**
 * RETRY_SCHEDULE_MS: comma-separated delays with optional units (`0,5s,5m,30m,2h`). Answers the
 * delays or the problems, each naming the variable.
 */
export function parseRetrySchedule(name: string, text: string): { delays: number[]; problems: string[] } {
  const parts = text.split(',');
  const delays = parts.map(parseDuration);
  const bad = parts.filter((_, i) => delays[i] === undefined).map((part) => JSON.stringify(part.trim()));
  if (bad.length > 0) {
    return {
      delays: [],
      problems: [`${name} has entries that are not durations (a number with ms, s, m, h or d, or bare ms): ${bad.join(', ')}`],
    };
  }
  const valid = delays as number[];
  return { delays: valid, problems: retryScheduleProblems(name, valid) };
}
