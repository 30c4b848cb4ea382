/**
 * HTTP/1.1 edge cases that Node's server would answer by itself, with empty
 * bodies, or pass on in a form the routes do not expect. A client of an
 * OpenAI API parses every error body, so each gets the OpenAI error shape:
 *
 * - `Expect` other than `100-continue`: 417 (RFC 9110 §10.1.1,
 *   https://www.rfc-editor.org/rfc/rfc9110#section-10.1.1).
 * - `Expect: 100-continue` with a Content-Length over the body limit: 413
 *   and no `100 Continue`, so the client never sends a body that would be
 *   refused (Node's default says Continue first and decides later).
 * - HTTP/1.1 without Host: 400 (RFC 9112 §3.2,
 *   https://www.rfc-editor.org/rfc/rfc9112#section-3.2). HTTP/1.0 needs none.
 * - The asterisk-form target `*`: 400. It is only meaningful for a
 *   server-wide OPTIONS (RFC 9112 §3.2.4), which this server does not answer.
 * - A `#fragment` in the target (never valid on the wire, RFC 9112 §3.2):
 *   dropped before routing, as nginx does, so `/v1/chat/completions#x` is
 *   routed and forwarded as `/v1/chat/completions`.
 * - `CONNECT` (a tunnel, RFC 9110 §9.3.6): 405. With no `connect` listener
 *   Node drops the connection without a word.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { SwitchyardError } from '../errors/errors.ts';
import { endWithError, sendError } from '../errors/error-answer.ts';
import { lingerOnClose } from './lingering-close.ts';

/** The listener the edge handling wraps. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Takes over the server's `request`, `checkContinue` and `checkExpectation`
 * events and hands every request that passes to `listener`, with any
 * fragment removed from `req.url`. The server must be created without a
 * request listener and with `requireHostHeader: false`.
 *
 * @param maxBodyBytes body limit (bytes) for the decision before `100 Continue`.
 */
export function handleProtocolEdges(server: Server, maxBodyBytes: number, listener: RequestListener): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const problem = targetOrHostProblem(req);
    if (problem !== undefined) refuse(req, res, problem);
    else pass(req, res, listener);
  });
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const problem = targetOrHostProblem(req) ?? declaredBodyProblem(req, maxBodyBytes);
    if (problem !== undefined) {
      refuse(req, res, problem);
      return;
    }
    res.writeContinue();
    pass(req, res, listener);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    refuse(req, res, new SwitchyardError('SWITCHYARD_EXPECTATION_FAILED', 'The only expectation this server meets is `Expect: 100-continue`.'));
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => refuseTunnel(socket));
}

/** How long a refused CONNECT's socket may stay open for the client to read the answer and close (ms). */
const TUNNEL_LINGER_MS = 5_000;

/**
 * Answers a CONNECT with 405 on the bare socket (Node has handed it over, no
 * response object), reads and drops whatever the client still sends so the
 * close cannot turn into a reset that hides the answer, and closes.
 */
function refuseTunnel(socket: Duplex): void {
  const error = new SwitchyardError('SWITCHYARD_METHOD_NOT_ALLOWED', 'CONNECT is not allowed: this server opens no tunnels.', {
    headers: { allow: 'GET, POST' },
  });
  socket.on('error', () => socket.destroy());
  socket.resume();
  endWithError(socket, error);
  setTimeout(() => socket.destroy(), TUNNEL_LINGER_MS).unref();
}

/** Why the target or Host makes the request unanswerable, or undefined. */
export function targetOrHostProblem(req: IncomingMessage): SwitchyardError | undefined {
  if (req.url === '*') {
    return new SwitchyardError('SWITCHYARD_BAD_REQUEST', 'The request target `*` is only for a server-wide OPTIONS, which this server does not answer.');
  }
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    return new SwitchyardError('SWITCHYARD_BAD_REQUEST', 'An HTTP/1.1 request must have a Host header.');
  }
  return undefined;
}

function declaredBodyProblem(req: IncomingMessage, maxBodyBytes: number): SwitchyardError | undefined {
  const declared = req.headers['content-length'];
  if (declared === undefined || Number(declared) <= maxBodyBytes) return undefined;
  return new SwitchyardError('SWITCHYARD_BODY_TOO_LARGE', `The request body exceeds the limit of ${maxBodyBytes} bytes.`);
}

function pass(req: IncomingMessage, res: ServerResponse, listener: RequestListener): void {
  const url = req.url;
  const hash = url === undefined ? -1 : url.indexOf('#');
  if (hash !== -1) req.url = (url as string).slice(0, hash);
  listener(req, res);
}

/**
 * Answers without reading the body, then closes the connection: the rest of
 * the request cannot be told apart from the next one. What the client still
 * sends is read and dropped, so the close cannot become a reset that
 * destroys the answer before the client reads it.
 */
function refuse(req: IncomingMessage, res: ServerResponse, error: SwitchyardError): void {
  // Even a request without a body may have more behind it (pipelined): the close always lingers.
  res.shouldKeepAlive = false;
  req.resume();
  lingerOnClose(req, 'client-end');
  sendError(res, error);
}
