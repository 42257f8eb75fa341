import { DeliveryError } from './delivery.errors';

const DAY_MS = 86_400_000;

/** The events a replay looks at: published at or after `from` and before `until`. */
export interface ReplayWindow {
  from: Date;
  until: Date;
}

/**
 * The window of `POST /webhooks/:id/replay`: [since, until), `until` defaulting to now. A window
 * that starts in the future or is reversed is refused; one reaching back past retention starts
 * where retention does (older events are gone or about to be), so it may end up empty.
 */
export function replayWindow(since: string, until: string | undefined, now: Date, retentionDays: number): ReplayWindow {
  const start = new Date(since);
  const end = until === undefined ? now : new Date(until);
  if (Number.isNaN(start.getTime())) throw DeliveryError.invalidReplayWindow('since must be an ISO 8601 date-time');
  if (Number.isNaN(end.getTime())) throw DeliveryError.invalidReplayWindow('until must be an ISO 8601 date-time');
  if (start.getTime() >= now.getTime()) {
    throw DeliveryError.invalidReplayWindow('since is in the future; a replay covers events already published');
  }
  if (start.getTime() >= end.getTime()) throw DeliveryError.invalidReplayWindow('since must be earlier than until');
  const retained = retentionDays > 0 ? now.getTime() - retentionDays * DAY_MS : 0;
  return { from: new Date(Math.max(start.getTime(), retained, 0)), until: end };
}
