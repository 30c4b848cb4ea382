/**
 * Lingering close (RFC 9112 §9.6): a server that answers before the request
 * body is over (413, 429 for the body budget, 408, a body refused at its
 * first bad byte) must not close the connection while the client is still
 * sending. Closing a socket with unread data makes the kernel send a reset,
 * and a client still writing its body then gets EPIPE/ECONNRESET and never
 * reads the answer: the 429 turns into the reset the contract forbids.
 *
 * Node's HTTP server ends such a connection with `socket.destroySoon()` once
 * the response is written. For these sockets it is replaced: the router
 * sends its FIN after the response, keeps reading (and discarding: the
 * request is already answered) until the client closes its side, and
 * destroys the socket only then, or after `lingerMs` at the latest.
 */
import type { Socket } from 'node:net';

/** How long a closing connection keeps reading what the client still sends (ms). */
export const DEFAULT_LINGER_MS = 5_000;

/**
 * Makes the next close of `socket` (the one after the current response) a
 * lingering close. Call before answering a request whose body was not read
 * to its end, together with `Connection: close`.
 */
export function lingerOnClose(socket: Socket, lingerMs = DEFAULT_LINGER_MS): void {
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.destroyed) return;
    const timer = setTimeout(() => this.destroy(), lingerMs);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy()); // the client has sent everything and closed its side
    this.on('error', () => this.destroy());
    this.end();
    this.resume();
  };
}

/** The minimum an answer to a request needs from `IncomingMessage`. */
interface AnsweredRequest {
  readonly complete: boolean;
  readonly socket: Socket;
  resume(): unknown;
}

/**
 * Arranges for the connection to close after the answer `res` is about to
 * get; when the request body is not over, what the client still sends is
 * read and discarded and the close lingers (see {@link lingerOnClose}).
 */
export function closeAfterAnswer(req: AnsweredRequest, res: { shouldKeepAlive: boolean }): void {
  res.shouldKeepAlive = false;
  if (req.complete) return;
  req.resume();
  lingerOnClose(req.socket);
}
