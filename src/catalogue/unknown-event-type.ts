import { closestMatch } from '../common/closest-match';
import { EVENT_TYPES, isEventType } from './event-catalogue';

/** An echoed value is cut here, so that a huge one does not come back in the answer. */
const ECHO_LIMIT = 100;

/**
 * The one wording for event types that are not in the catalogue, whether subscribed to
 * (`events` of a webhook, a list) or published (`type` of an event, one value): each offending
 * value quoted, with the nearest catalogue type when it looks like a typo.
 *
 *     events contains an unknown event type: "order.creatd" (did you mean "order.created"?); see GET /event-types
 *     type is an unknown event type: "ORDER.CREATED" (did you mean "order.created"?); see GET /event-types
 */
export function unknownEventTypeMessage(field: string, value: unknown): string {
  if (!Array.isArray(value)) return `${field} is an unknown event type: ${describe(value)}; see GET /event-types`;
  const unknown = value.filter((item) => !isEventType(item));
  const what = unknown.length === 1 ? 'an unknown event type' : 'unknown event types';
  return `${field} contains ${what}: ${unknown.map(describe).join(', ')}; see GET /event-types`;
}

/** GET /event-types/:type of a type not in the catalogue: `Event type "order.creatd" (did you mean "order.created"?) not found; …`. */
export function eventTypeNotFoundMessage(value: string): string {
  return `Event type ${describe(value)} not found; see GET /event-types`;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  const echoed = text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text;
  const suggestion = typeof value === 'string' ? closestMatch(value, EVENT_TYPES) : undefined;
  return suggestion ? `${echoed} (did you mean "${suggestion}"?)` : echoed;
}
