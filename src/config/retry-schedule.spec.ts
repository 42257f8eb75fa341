import { formatDuration, parseDuration, parseRetrySchedule, retryScheduleProblems } from './retry-schedule';

describe('retry schedules', () => {
  it('reads durations with units, a bare number being milliseconds', () => {
    expect(['0', '250', '250ms', '5s', '1.5s', '5m', '2h', '1d'].map(parseDuration)).toEqual([
      0, 250, 250, 5_000, 1_500, 300_000, 7_200_000, 86_400_000,
    ]);
    expect(['', 's', '-5s', '5 minutes', '0x10', '1e3', '5sec'].map(parseDuration)).toEqual(Array(7).fill(undefined));
  });

  it('writes a duration in the largest unit that holds it whole', () => {
    expect([7 * 86_400_000, 5_400_000, 6_000, 1_500, 0].map(formatDuration)).toEqual(['7d', '90m', '6s', '1500ms', '0ms']);
  });

  it('reads a long schedule written with units', () => {
    expect(parseRetrySchedule('RETRY_SCHEDULE_MS', '0,5s,5m,30m,2h,5h,10h,10h')).toEqual({
      delays: [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      problems: [],
    });
  });

  it('names the variable and the bad entries', () => {
    expect(parseRetrySchedule('RETRY_SCHEDULE_MS', '0,5x,,1s').problems).toEqual([
      'RETRY_SCHEDULE_MS has entries that are not durations (a number with ms, s, m, h or d, or bare ms): "5x", ""',
    ]);
  });

  it('wants 1 to 30 entries, the first 0, at most 7 days in all', () => {
    expect(retryScheduleProblems('retrySchedule', [])).toEqual(['retrySchedule must have 1 to 30 entries']);
    expect(retryScheduleProblems('retrySchedule', Array(31).fill(0))).toEqual(['retrySchedule must have 1 to 30 entries']);
    expect(retryScheduleProblems('retrySchedule', [1000])).toEqual([
      'retrySchedule must start with 0 (the first attempt goes out at once)',
    ]);
    expect(retryScheduleProblems('retrySchedule', [0, 7 * 86_400_000])).toEqual([]);
    expect(retryScheduleProblems('retrySchedule', [0, 7 * 86_400_000, 1])).toEqual(['retrySchedule must add up to at most 7 days']);
    expect(retryScheduleProblems('retrySchedule', [0, 1.5])).toEqual(['retrySchedule entries must be whole milliseconds, 0 or more']);
    expect(retryScheduleProblems('retrySchedule', [0, -1])).toEqual(['retrySchedule entries must be whole milliseconds, 0 or more']);
  });
});
