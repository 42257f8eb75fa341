import type { Dispatcher } from 'undici';
import type { ClientTls, ReceiverAccess } from '../../webhooks/receiver-credentials';

/** Endpoints with a client certificate whose connection pools are kept at once. */
const MAX_AGENTS = 1_000;

type ClosableDispatcher = Pick<Dispatcher, 'dispatch' | 'close' | 'destroy'>;

/**
 * One connection pool per endpoint that presents a client certificate (mutual TLS), kept by
 * endpoint and credentials version: a changed certificate gets a new pool, and the old one closes
 * once the requests on it end. The other endpoints share the sender's pool.
 */
export class ClientTlsAgents<T extends ClosableDispatcher = ClosableDispatcher> {
  private readonly agents = new Map<string, { version: string; agent: T }>();

  constructor(
    private readonly create: (tls: ClientTls) => T,
    private readonly capacity = MAX_AGENTS,
  ) {}

  agentFor(access: ReceiverAccess & { tls: ClientTls }): T {
    const held = this.agents.get(access.endpointId);
    if (held?.version === access.version) return held.agent;
    if (held) this.retire(access.endpointId);
    else if (this.agents.size >= this.capacity) this.retire(this.agents.keys().next().value!);
    const agent = this.create(access.tls);
    this.agents.set(access.endpointId, { version: access.version, agent });
    return agent;
  }

  get size(): number {
    return this.agents.size;
  }

  /** At shutdown: whatever is still in flight is abandoned, as on the shared pool. */
  async destroyAll(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map(({ agent }) => agent.destroy().catch(() => undefined)));
  }

  private retire(endpointId: string): void {
    const held = this.agents.get(endpointId);
    this.agents.delete(endpointId);
    // close(), not destroy(): attempts already under way on it end normally.
    void held?.agent.close().catch(() => undefined);
  }
}
