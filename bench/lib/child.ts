import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildMessage, ParentMessage } from './protocol';

/** The JSON argument every bench child takes as its first command-line argument. */
export function childArgs<T>(): T {
  const raw = process.argv[2];
  if (!raw) throw new Error('expected the arguments as JSON in argv[2]');
  return JSON.parse(raw) as T;
}

export function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) {
      process.stdout.write(`${JSON.stringify(message)}\n`);
      resolve();
      return;
    }
    process.send(message, undefined, {}, () => resolve());
  });
}

/** A child never outlives the orchestrator: when the IPC channel closes, it exits. */
export function exitWithParent(onExit: () => void = () => process.exit(1)): void {
  process.on('disconnect', onExit);
}

/** Answers the orchestrator's calls: `handlers[method](params)`. */
export function serveRpc(handlers: Record<string, (params: unknown) => unknown>): void {
  process.on('message', (raw: ParentMessage) => {
    if (raw?.type !== 'rpc') return;
    const handler = handlers[raw.method];
    void (async () => {
      try {
        if (!handler) throw new Error(`unknown method ${raw.method}`);
        await send({ type: 'rpc-result', id: raw.id, result: await handler(raw.params) });
      } catch (error) {
        await send({ type: 'rpc-result', id: raw.id, error: String((error as Error)?.stack ?? error) });
      }
    })();
  });
}

/** Runs a load generator's main: sends its result (or its error) to the orchestrator and exits. */
export function runMain(main: () => Promise<unknown>): void {
  exitWithParent();
  main()
    .then(async (result) => {
      await send({ type: 'result', result });
      process.exit(0);
    })
    .catch(async (error: unknown) => {
      await send({ type: 'error', message: String((error as Error)?.stack ?? error) });
      process.exit(1);
    });
}

/**
 * One loopback server per endpoint (each its own origin, as real endpoints are), kept alive longer
 * than the senders' keep-alive so that connections are reused, never timed out by the server.
 */
export async function listenPerEndpoint(
  endpoints: number,
  handler: (endpoint: number) => (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ servers: Server[]; ports: number[] }> {
  const servers: Server[] = [];
  const ports: number[] = [];
  for (let endpoint = 0; endpoint < endpoints; endpoint++) {
    const server = createServer(handler(endpoint));
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = 0;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    ports.push((server.address() as AddressInfo).port);
  }
  return { servers, ports };
}
