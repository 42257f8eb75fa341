import { newId } from '../common/ids';

/** The JSON body of every delivery, in this key order (dispatch stores it in the event log). */
export interface Envelope<T extends string = string, D = unknown> {
  id: string;
  type: T;
  timestamp: string;
  data: D;
}

/**
 * Builds an envelope and its exact bytes. The bytes are stored once and sent unchanged on every
 * attempt and retry, so a signature over them always verifies and receivers see identical bodies.
 */
export function buildEnvelope<T extends string, D>(type: T, data: D, at = new Date()): { envelope: Envelope<T, D>; body: string } {
  const envelope: Envelope<T, D> = { id: newId('evt', at.getTime()), type, timestamp: at.toISOString(), data };
  return { envelope, body: JSON.stringify(envelope) };
}
