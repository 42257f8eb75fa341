/**
 * How many endpoints each of a worker's per-endpoint caches keeps (opened secret, parsed URL,
 * headers, OAuth2 token), the least recently used going first. Fair dispatch brings an endpoint
 * back only after every other one, so a cache smaller than the endpoints a worker serves would
 * miss on every delivery; a few hundred bytes an endpoint, some 70 MB at this size.
 */
export const ENDPOINT_CACHE_ENTRIES = 100_000;
