/** Most extra headers an endpoint may have. */
export const MAX_ENDPOINT_HEADERS = 20;
/** Longest value of one, in bytes (printable ASCII, so characters). */
export const MAX_HEADER_VALUE_LENGTH = 1024;

/** An HTTP field name: a token (RFC 9110 §5.6.2). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Printable ASCII and spaces; no control characters, so no header can be split or smuggled. */
const PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * Names Hookline sets itself or that belong to the connection, not to the message: a receiver must
 * be able to trust them, and an endpoint's setting must not break the request.
 */
const RESERVED = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'host',
  'user-agent',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

function reservedReason(lower: string): string | undefined {
  if (RESERVED.has(lower)) return 'is set by Hookline or the connection';
  if (lower.startsWith('x-webhook-') || lower.startsWith('webhook-')) return 'is reserved for the signature headers';
  return undefined;
}

/**
 * What is wrong with an endpoint's `headers`, one sentence per problem, naming the header. The
 * same name in two cases (`X-Token`, `x-token`) is one header twice, and refused.
 */
export function endpointHeaderProblems(headers: unknown): string[] {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return ['headers must be an object of header names to string values'];
  }
  const entries = Object.entries(headers);
  if (entries.length > MAX_ENDPOINT_HEADERS) return [`headers must have at most ${MAX_ENDPOINT_HEADERS} entries`];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const shown = JSON.stringify(name);
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) problems.push(`headers: ${shown} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
    else if (reservedReason(lower)) problems.push(`headers: ${shown} ${reservedReason(lower)} and cannot be set`);
    else if (seen.has(lower)) problems.push(`headers: ${shown} is given twice (header names ignore case)`);
    seen.add(lower);
    if (typeof value !== 'string') problems.push(`headers: the value of ${shown} must be a string`);
    else if (!PRINTABLE.test(value))
      problems.push(`headers: the value of ${shown} must be printable ASCII (no control characters or line breaks)`);
    else if (value.length > MAX_HEADER_VALUE_LENGTH)
      problems.push(`headers: the value of ${shown} must be at most ${MAX_HEADER_VALUE_LENGTH} characters`);
  }
  return problems;
}
