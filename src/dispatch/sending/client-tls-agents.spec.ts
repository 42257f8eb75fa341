import type { ReceiverAccess } from '../../webhooks/receiver-credentials';
import { ClientTlsAgents } from './client-tls-agents';

describe('ClientTlsAgents', () => {
  const tls = { clientCertificate: 'cert', clientKey: 'key' };
  const access = (endpointId: string, version = 'v1') => ({ endpointId, version, tls }) as ReceiverAccess & { tls: typeof tls };
  const made: Array<{ closed: boolean; destroyed: boolean }> = [];
  const create = () => {
    const agent = {
      closed: false,
      destroyed: false,
      dispatch: () => true,
      close: () => ((agent.closed = true), Promise.resolve()),
      destroy: () => ((agent.destroyed = true), Promise.resolve()),
    };
    made.push(agent);
    return agent as never;
  };

  beforeEach(() => (made.length = 0));

  it('keeps one pool per endpoint and version, closing the old one on a change', () => {
    const agents = new ClientTlsAgents(create);
    const first = agents.agentFor(access('wh_1'));
    expect(agents.agentFor(access('wh_1'))).toBe(first);
    const second = agents.agentFor(access('wh_1', 'v2'));
    expect(second).not.toBe(first);
    expect(made[0].closed).toBe(true);
    expect(made[1].closed).toBe(false);
  });

  it('closes the oldest pool past its capacity, and destroys all at shutdown', async () => {
    const agents = new ClientTlsAgents(create, 2);
    agents.agentFor(access('wh_1'));
    agents.agentFor(access('wh_2'));
    agents.agentFor(access('wh_3'));
    expect(made.map((agent) => agent.closed)).toEqual([true, false, false]);
    expect(agents.size).toBe(2);
    await agents.destroyAll();
    expect(made.map((agent) => agent.destroyed)).toEqual([false, true, true]);
    expect(agents.size).toBe(0);
  });
});
