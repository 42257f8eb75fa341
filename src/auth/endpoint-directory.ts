import { Injectable } from '@nestjs/common';

/** Answers which of `ids` are endpoints of the store. */
export type EndpointLookup = (storeId: string, ids: readonly string[]) => Promise<string[]>;

/**
 * How auth checks a portal session's `webhookIds` without importing the module that owns the
 * endpoints (auth sits below it): that module registers its lookup here at start, as dispatch
 * registers its handler with webhooks.
 */
@Injectable()
export class EndpointDirectory {
  private lookup?: EndpointLookup;

  register(lookup: EndpointLookup): void {
    this.lookup = lookup;
  }

  /** The ids of `ids` that are not endpoints of the store. */
  async missing(storeId: string, ids: readonly string[]): Promise<string[]> {
    if (!this.lookup) throw new Error('EndpointDirectory: no endpoint lookup registered (is WebhooksModule loaded?)');
    const found = new Set(await this.lookup(storeId, ids));
    return ids.filter((id) => !found.has(id));
  }
}
