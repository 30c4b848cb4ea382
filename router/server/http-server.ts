/**
 * Creates the Node HTTP servers with the limits a public-facing proxy needs,
 * and answers protocol-level client errors (oversized headers, conflicting
 * Content-Length/Transfer-Encoding, timeouts, and the edges in
 * protocol-edges.ts) in the OpenAI error shape instead of Node's
 * empty-bodied defaults.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { SwitchyardError } from '../errors/errors.ts';
import { endWithError } from '../errors/error-answer.ts';
import { parseHostPort } from '../config/host-port.ts';
import { handleProtocolEdges } from './protocol-edges.ts';

/** Server-side limits, in milliseconds and bytes. */
export interface HttpServerLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxHeaderBytes: number;
  /** Largest request body; a larger declared Content-Length gets 413 before `100 Continue`. */
  readonly maxBodyBytes: number;
}

/**
 * Creates an HTTP/1.1 server whose client errors get JSON answers. Server
 * errors after listening (EMFILE when accepting at the open-file limit) go to
 * `onError` and never crash the process: libuv keeps accepting once
 * descriptors free up. A failed bind is not one of them: {@link listen}
 * rejects with it, and the process must exit (a router that cannot bind its
 * port serves nothing while its probes still answer 200).
 */
export function createHttpServer(
  limits: HttpServerLimits,
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  onError: (err: Error) => void,
): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      noDelay: true,
      // Answered in the OpenAI shape by handleProtocolEdges instead of Node's empty 400.
      requireHostHeader: false,
    },
  );
  handleProtocolEdges(server, limits.maxBodyBytes, listener);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket));
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.syscall !== 'listen') onError(err);
  });
  return server;
}

/** The answer to a client error with Node's `code`, or undefined when the client is gone. */
function errorFor(code: string | undefined): SwitchyardError | undefined {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new SwitchyardError('SWITCHYARD_HEADERS_TOO_LARGE', 'The request headers are too large.');
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new SwitchyardError('SWITCHYARD_REQUEST_TIMEOUT', 'The request was not received in time.');
    default:
      return new SwitchyardError('SWITCHYARD_BAD_REQUEST', 'The request is not valid HTTP/1.1 (for example, conflicting Content-Length and Transfer-Encoding).');
  }
}

function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // An answer already under way on this connection owns it (Node's own default makes the same
  // check): a second one written now reaches the client as an extra, unsolicited response. A
  // request refused at once (no Host, say) whose body then broke its chunked framing got two 400s.
  const underWay = (socket as Socket & { _httpMessage?: { headersSent: boolean; shouldKeepAlive: boolean } | null })._httpMessage;
  if (underWay?.headersSent === true) {
    underWay.shouldKeepAlive = false; // the parser is spent: close once that answer is out
    return;
  }
  const answer = errorFor(err.code);
  if (answer === undefined || !socket.writable) {
    socket.destroy();
    return;
  }
  endWithError(socket, answer);
}

/**
 * Listens on `host:port` with an explicit backlog; resolves with the bound
 * port, or rejects with the bind error (EADDRINUSE, EACCES, EADDRNOTAVAIL).
 */
export function listen(server: Server, address: string, backlog: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const { host, port } = parseHostPort(address);
    server.once('error', reject);
    server.listen({ host, port, backlog }, () => {
      server.removeListener('error', reject);
      const bound = server.address();
      resolve(typeof bound === 'object' && bound !== null ? bound.port : port);
    });
  });
}
