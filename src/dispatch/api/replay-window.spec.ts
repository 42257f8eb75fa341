import { DeliveryError, DeliveryErrorCode } from './delivery.errors';
import { replayWindow } from './replay-window';

const NOW = new Date('2026-11-25T12:00:00.000Z');

function refusal(since: string, until?: string): string {
  try {
    replayWindow(since, until, NOW, 30);
  } catch (error) {
    if (error instanceof DeliveryError && error.code === DeliveryErrorCode.InvalidReplayWindow) return error.message;
    throw error;
  }
  throw new Error('expected the window to be refused');
}

describe('replayWindow', () => {
  it('runs from since to now when until is left out', () => {
    expect(replayWindow('2026-11-25T10:00:00.000Z', undefined, NOW, 30)).toEqual({
      from: new Date('2026-11-25T10:00:00.000Z'),
      until: NOW,
    });
  });

  it('keeps a given until, also one later than now', () => {
    expect(replayWindow('2026-11-25T10:00:00Z', '2026-11-25T11:00:00Z', NOW, 30).until).toEqual(new Date('2026-11-25T11:00:00Z'));
    expect(replayWindow('2026-11-25T10:00:00Z', '2026-11-26T00:00:00Z', NOW, 30).until).toEqual(new Date('2026-11-26T00:00:00Z'));
  });

  it('reaches back no further than retention keeps events, and to any time with retention off', () => {
    expect(replayWindow('2026-01-01T00:00:00Z', undefined, NOW, 30).from).toEqual(new Date('2026-10-26T12:00:00.000Z'));
    expect(replayWindow('2026-01-01T00:00:00Z', undefined, NOW, 0).from).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(replayWindow('1900-01-01T00:00:00Z', undefined, NOW, 0).from).toEqual(new Date(0));
  });

  it('leaves a window that ended before retention empty rather than refusing it', () => {
    const window = replayWindow('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z', NOW, 30);
    expect(window.from.getTime()).toBeGreaterThan(window.until.getTime());
  });

  it('refuses a window that starts now or later', () => {
    expect(refusal('2026-11-25T12:00:00.000Z')).toMatch(/since is in the future/);
    expect(refusal('2026-11-26T00:00:00Z', '2026-11-27T00:00:00Z')).toMatch(/since is in the future/);
  });

  it('refuses a reversed or empty window', () => {
    expect(refusal('2026-11-25T10:00:00Z', '2026-11-25T09:00:00Z')).toBe('since must be earlier than until');
    expect(refusal('2026-11-25T10:00:00Z', '2026-11-25T10:00:00Z')).toBe('since must be earlier than until');
  });

  it('refuses text that is no date', () => {
    expect(refusal('last week')).toBe('since must be an ISO 8601 date-time');
    expect(refusal('2026-11-25T10:00:00Z', 'tomorrow')).toBe('until must be an ISO 8601 date-time');
  });
});
