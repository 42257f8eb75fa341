/** Most extra headers an endpoint may have. */
export const MAX_ENDPOINT_HEADERS = 20;
/** Longest value of one, in bytes (printable ASCII, so characters). */
export const MAX_HEADER_VALUE_LENGTH = 1024;
/** Longest name of one. */
export const MAX_HEADER_NAME_LENGTH = 256;
/**
 * Most bytes of all the names and values of an endpoint together: they go out with every attempt,
 * so an endpoint's headers must stay small beside the body (docs/reliability.md).
 */
export const MAX_ENDPOINT_HEADERS_SIZE = 8 * 1024;

/** Names that always carry credentials. */
const SENSITIVE_NAMES = new Set(['authorization', 'proxy-authorization', 'cookie']);
/** A name holding one of these, in any case, is taken to carry a credential. */
const SENSITIVE_WORDS = ['key', 'token', 'secret', 'auth', 'password', 'signature'];

/**
 * Whether a header carries a credential: its value is stored sealed and never read back through
 * the API (only that it is set).
 */
export function isSensitiveHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return SENSITIVE_NAMES.has(lower) || SENSITIVE_WORDS.some((word) => lower.includes(word));
}

/** The bytes of all names and values together (a null value is counted by whoever knows it). */
export function endpointHeadersSize(headers: Readonly<Record<string, string | null>>): number {
  let size = 0;
  for (const [name, value] of Object.entries(headers)) size += name.length + (value?.length ?? 0);
  return size;
}

export function headersTooLarge(size: number): string {
  return `headers: all names and values together must be at most ${MAX_ENDPOINT_HEADERS_SIZE} bytes (these are ${size})`;
}

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
 * same name in two cases (`X-Token`, `x-token`) is one header twice, and refused. A sensitive
 * header may be given as null (keep the stored value): whether there is one is the service's to say.
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
    // A name past the limit is not repeated whole in the answer.
    const shown = name.length > MAX_HEADER_NAME_LENGTH ? `${JSON.stringify(name.slice(0, 32)).slice(0, -1)}…"` : JSON.stringify(name);
    const lower = name.toLowerCase();
    if (name.length > MAX_HEADER_NAME_LENGTH)
      problems.push(`headers: the name ${shown} must be at most ${MAX_HEADER_NAME_LENGTH} characters (it has ${name.length})`);
    else if (!TOKEN.test(name)) problems.push(`headers: ${shown} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
    else if (reservedReason(lower)) problems.push(`headers: ${shown} ${reservedReason(lower)} and cannot be set`);
    else if (seen.has(lower)) problems.push(`headers: ${shown} is given twice (header names ignore case)`);
    seen.add(lower);
    if (value === null && isSensitiveHeader(name)) continue;
    if (typeof value !== 'string')
      problems.push(`headers: the value of ${shown} must be a string${isSensitiveHeader(name) ? ' (or null to keep the stored one)' : ''}`);
    else if (!PRINTABLE.test(value))
      problems.push(`headers: the value of ${shown} must be printable ASCII (no control characters or line breaks)`);
    else if (value.length > MAX_HEADER_VALUE_LENGTH)
      problems.push(`headers: the value of ${shown} must be at most ${MAX_HEADER_VALUE_LENGTH} characters`);
    // An empty credential carries nothing; refused, a client that shows no value cannot erase one by saving it.
    else if (value === '' && isSensitiveHeader(name))
      problems.push(`headers: the value of ${shown} must not be empty (give the value, or null to keep the stored one)`);
  }
  if (problems.length === 0) {
    const size = endpointHeadersSize(headers as Record<string, string | null>);
    if (size > MAX_ENDPOINT_HEADERS_SIZE) problems.push(headersTooLarge(size));
  }
  return problems;
}
