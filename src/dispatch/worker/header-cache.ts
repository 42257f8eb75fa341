import { LRUCache } from 'lru-cache';
import { ReadBatcher } from '../../database/read-batcher';
import { ENDPOINT_CACHE_ENTRIES } from '../sending/endpoint-cache-size';
import type { SendableHeaders } from '../../webhooks/webhooks.service';

/** Reads of endpoints' headers out at once; misses that arrive meanwhile go together in the next. */
const READS_IN_FLIGHT = 2;
const ENDPOINTS_PER_READ = 500;

const NO_HEADERS: SendableHeaders = { revision: '', headers: {} };

/**
 * Endpoints' headers ready to send, by endpoint, kept while a claim shows the same revision: a
 * claimed delivery carries only its endpoint's headers revision (null when it has none), so that
 * headers are neither read nor parsed on every claimed row, and sealed values are opened once per
 * change. Misses of one claim are read together in one statement.
 *
 * A read that fails (the database went away after the claim) fails the attempt's run: nothing is
 * sent, and the delivery comes back when its lease ends, as after a crash.
 */
export class HeaderCache {
  private readonly entries: LRUCache<string, { revision: string; headers: Promise<SendableHeaders | undefined> }>;
  private readonly reads: ReadBatcher<string, SendableHeaders | undefined>;

  constructor(load: (ids: readonly string[]) => Promise<Map<string, SendableHeaders>>, capacity = ENDPOINT_CACHE_ENTRIES) {
    this.entries = new LRUCache({ max: capacity });
    this.reads = new ReadBatcher(
      async (ids: string[]) => {
        const found = await load([...new Set(ids)]);
        return ids.map((id) => found.get(id));
      },
      READS_IN_FLIGHT,
      ENDPOINTS_PER_READ,
    );
  }

  /** The endpoint's headers at `revision` or later; undefined when the endpoint no longer exists. */
  headersOf(webhookId: string, revision: string | null): Promise<SendableHeaders | undefined> {
    if (revision === null) return Promise.resolve(NO_HEADERS);
    const cached = this.entries.get(webhookId);
    if (cached && cached.revision === revision) return cached.headers;
    const headers = this.reads.read(webhookId);
    // Bounded like the secret cache: deleted endpoints' headers do not stay in memory for good.
    const entry = { revision, headers };
    this.entries.set(webhookId, entry);
    headers.catch(() => {
      if (this.entries.get(webhookId) === entry) this.entries.delete(webhookId);
    });
    return headers;
  }
}
