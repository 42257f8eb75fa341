import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * Nest's Express adapter, with one change: Node's HTTP server builds each request and response
 * with Express's own prototypes (`app.request`, `app.response`) from the start.
 *
 * Express gives every request its methods (`req.get`, `res.json`, …) by changing the prototype of
 * the objects Node made (`Object.setPrototypeOf` in `app.handle`). V8 then gives each of them a
 * hidden class of its own, which only a full collection frees. Built with Express's prototypes
 * from the start, the objects need no change (Express's call then does nothing); what that saves
 * is in docs/scaling.md. The fix is the one proposed upstream (expressjs/express#5998), with
 * Node's `IncomingMessage` and `ServerResponse` server options, which exist for it.
 *
 * An HTTPS server or `forceCloseConnections` (neither of which Hookline uses) falls back to Nest's
 * own server, which works the same, only slower.
 */
export class HooklineExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.forceCloseConnections) return super.initHttpServer(options);
    const app = this.getInstance<Express>();
    this.httpServer = createServer(
      {
        IncomingMessage: withPrototype(IncomingMessage, app.request),
        ServerResponse: withPrototype(ServerResponse, app.response),
      },
      app,
    );
  }
}

/**
 * A constructor that runs `base`'s constructor on an object whose prototype is `prototype`.
 * `base` is called, not constructed through `Reflect.construct(base, args, Constructed)`: V8 would
 * then make a new hidden class for every object, as `Object.setPrototypeOf` does. Node's
 * `IncomingMessage` and `ServerResponse` are plain constructor functions, which allows the call.
 */
function withPrototype<T extends typeof IncomingMessage | typeof ServerResponse>(base: T, prototype: object): T {
  const construct = base as unknown as (this: object, ...args: unknown[]) => void;
  function Constructed(this: object, ...args: unknown[]): void {
    construct.apply(this, args);
  }
  Constructed.prototype = prototype;
  return Constructed as unknown as T;
}
