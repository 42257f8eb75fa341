/**
 * A Retry-After header as milliseconds from `nowMs`: delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`). A date in the past is 0; anything else is undefined (ignored).
 */
export function retryAfterMs(header: string | string[], nowMs: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) {
    const seconds = Number(value);
    return Number.isSafeInteger(seconds * 1000) ? seconds * 1000 : undefined;
  }
  // An IMF-fixdate (or the obsolete forms Date.parse also reads) names a day of the week and GMT.
  if (!/GMT$/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
