import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from './error-response';

/** What Node's HTTP parser reports, and the answer it deserves. */
const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'Request headers are larger than the 16 KiB limit' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, message: 'Chunk extensions are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request took too long to arrive' },
  HPE_INVALID_METHOD: { status: 400, message: 'Unknown HTTP method' },
};

/**
 * Requests that Node's HTTP parser refuses before Express sees them (headers over 16 KiB, a
 * method llhttp does not know, a malformed request line or header) get Node's default answer,
 * a bare `400 Bad Request` or `431` without a body. This answers them in the API's one error shape
 * instead, as Node's documentation of 'clientError' suggests, and closes the
 * connection (the parser's state is lost). A CONNECT request gets a 405 the same way.
 *
 * When the bad bytes follow a good request on the same connection (say, a body sent without
 * Content-Length after a DELETE), that request, received whole, is still being answered: a 400
 * written then would reach the client as the answer to the good request, which went through
 * (a DELETE that succeeded would read "400 Unknown HTTP method"). Then the good request's answer goes out and the connection closes, without a 400.
 * Bad bytes inside a request's own body (a broken chunk) are that request's error: 400 at once.
 */
export function answerClientErrorsInJson(server: Server): void {
  const inFlight = new WeakMap<Duplex, { requests: Set<IncomingMessage>; onIdle?: () => void }>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry = inFlight.get(req.socket) ?? { requests: new Set<IncomingMessage>() };
    entry.requests.add(req);
    inFlight.set(req.socket, entry);
    res.once('close', () => {
      entry.requests.delete(req);
      if (entry.requests.size === 0) entry.onIdle?.();
    });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const pending = inFlight.get(socket);
    if (pending && pending.requests.size > 0 && [...pending.requests].every((req) => req.complete)) {
      pending.onIdle = () => socket.end();
      return;
    }
    const { status, message } = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, message: 'Malformed HTTP request' };
    // An answer to HEAD has no body (RFC 9110 §9.3.2); the request's start is usually in the packet.
    const raw = (error as { rawPacket?: Buffer }).rawPacket;
    answerAndClose(socket, status, message, raw?.subarray(0, 5).toString('latin1') === 'HEAD ');
  });
  // Node hands CONNECT to this event and, without a listener, hangs up without a word.
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    answerAndClose(socket, 405, 'CONNECT is not supported: this is not a proxy');
  });
}

function answerAndClose(socket: Duplex, status: number, message: string, headOnly = false): void {
  const body = JSON.stringify(errorBody(status, message));
  socket.end(
    [
      `HTTP/1.1 ${status} ${errorBody(status, '').error}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      '',
      headOnly ? '' : body,
    ].join('\r\n'),
  );
}
