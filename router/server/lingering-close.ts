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
 * request is already answered) until the body is over or the client closes
 * its side, and destroys the socket only then, or after `lingerMs` at the
 * latest. A lingering socket holds a descriptor and counts as a connection,
 * so the linger ends as soon as nothing more is owed.
 */
import type { Socket } from 'node:net';

/** How long a closing connection keeps reading what the client still sends (ms). */
export const DEFAULT_LINGER_MS = 5_000;

/** The request whose answer ends the connection, as the lingering close reads it. */
interface AnsweredRequest {
  readonly complete: boolean;
  readonly socket: Socket;
  resume(): unknown;
  once(event: 'end', listener: () => void): unknown;
}

/**
 * Makes the next close of `req`'s connection (the one after the current
 * response) a lingering close: FIN after the response, then read and drop
 * what the client still sends; destroy once the response is flushed and
 * either the request body is over (`until: 'body-end'`) or the client has
 * closed its side (`until: 'client-end'`, for answers that may have pipelined
 * requests behind them), or after `lingerMs` at the latest. Lingering holds a
 * descriptor, so answers to complete requests do not linger at all.
 */
export function lingerOnClose(req: AnsweredRequest, until: 'body-end' | 'client-end', lingerMs = DEFAULT_LINGER_MS): void {
  const socket = req.socket;
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.destroyed) return;
    const timer = setTimeout(() => this.destroy(), lingerMs);
    timer.unref();
    let bodyOver = req.complete;
    const maybeDestroy = () => {
      if (this.writableFinished && until === 'body-end' && bodyOver) this.destroy();
    };
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy()); // the client has sent everything and closed its side
    this.once('finish', maybeDestroy);
    req.once('end', () => {
      bodyOver = true;
      maybeDestroy();
    });
    this.on('error', () => this.destroy());
    this.end();
    this.resume();
  };
}

/**
 * Arranges for the connection to close after the answer `res` is about to
 * get; when the request body is not over, what the client still sends is
 * read and discarded until it is, and only then does the connection close
 * (see {@link lingerOnClose}).
 */
export function closeAfterAnswer(req: AnsweredRequest, res: { shouldKeepAlive: boolean }): void {
  res.shouldKeepAlive = false;
  if (req.complete) return;
  req.resume();
  lingerOnClose(req, 'body-end');
}
