import { isEventType, isOperationalEventType, reservedEventTypeMessage, validateEventData } from '../catalogue/event-catalogue';
import { unknownEventTypeMessage } from '../catalogue/unknown-event-type';

/** Most events in one batch (POST /events/batch, EventPublisher.publishMany). */
export const MAX_BATCH_EVENTS = 1_000;

/** An Idempotency-Key, as a header or as an event's `idempotencyKey`: 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const EVENT_FIELDS: ReadonlySet<string> = new Set(['type', 'data', 'idempotencyKey']);

/**
 * Every problem of a batch of events, each message naming its event by index
 * (`events[3].data.total is required`, `events[1].type is an unknown event type: …`); empty when
 * the whole batch may be published. All events are checked, so that one answer lists every bad
 * one. The same key on two events of one batch is refused: the second would replay the first,
 * which is not published yet, so no answer could be right for both.
 */
export function batchProblems(events: unknown): string[] {
  if (!Array.isArray(events)) return ['events must be an array'];
  if (events.length === 0 || events.length > MAX_BATCH_EVENTS) {
    return [`events must hold 1 to ${MAX_BATCH_EVENTS.toLocaleString('en')} events (got ${events.length})`];
  }
  const problems: string[] = [];
  const firstWithKey = new Map<string, number>();
  events.forEach((event: unknown, index) => {
    const at = `events[${index}]`;
    if (typeof event !== 'object' || event === null || Array.isArray(event)) {
      problems.push(`${at} must be an object`);
      return;
    }
    const { type, data, idempotencyKey } = event as Record<string, unknown>;
    for (const key of Object.keys(event)) if (!EVENT_FIELDS.has(key)) problems.push(`${at}.${key} is not allowed`);
    if (type === undefined) problems.push(`${at}.type is required`);
    else if (!isEventType(type)) problems.push(unknownEventTypeMessage(`${at}.type`, type));
    else if (isOperationalEventType(type)) problems.push(reservedEventTypeMessage(`${at}.type`, type));
    if (data === undefined) problems.push(`${at}.data is required`);
    else if (isEventType(type)) problems.push(...validateEventData(type, data).map((problem) => `${at}.${problem}`));
    else if (typeof data !== 'object' || data === null || Array.isArray(data)) problems.push(`${at}.data must be an object`);
    if (idempotencyKey !== undefined) {
      if (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY.test(idempotencyKey)) {
        problems.push(`${at}.idempotencyKey must be 1 to 255 visible ASCII characters`);
      } else if (firstWithKey.has(idempotencyKey)) {
        problems.push(
          `${at}.idempotencyKey ${JSON.stringify(idempotencyKey)} is also the key of events[${firstWithKey.get(idempotencyKey)}]; each event of a batch needs its own key`,
        );
      } else {
        firstWithKey.set(idempotencyKey, index);
      }
    }
  });
  return problems;
}
