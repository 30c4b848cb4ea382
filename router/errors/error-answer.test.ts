import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { describe, it } from 'node:test';
import { endWithError, errorResponse, renderError, sendError } from './error-answer.ts';
import { SwitchyardError } from './errors.ts';

/**
 * A 429 with every kind of header a refusal carries (Retry-After from the
 * error, one of its own) and a message whose UTF-8 length differs from its
 * length in characters, so a Content-Length counted in characters shows.
 */
function shed(): SwitchyardError {
  return new SwitchyardError('SWITCHYARD_OVERLOADED', 'Überlastet: every engine is saturated.', { retryAfterSeconds: 1.5, headers: { 'x-switchyard-reason': 'saturated' } });
}

const EXPECTED_BODY =
  '{"error":{"message":"Überlastet: every engine is saturated.","type":"rate_limit_exceeded","param":null,"code":"SWITCHYARD_OVERLOADED"}}';
const EXPECTED_HEADERS: readonly (readonly [string, string])[] = [
  ['content-type', 'application/json'],
  ['content-length', String(Buffer.byteLength(EXPECTED_BODY))],
  ['x-switchyard-reason', 'saturated'],
  ['retry-after', '2'],
];

interface RawAnswer {
  readonly statusLine: string;
  /** Names lower-cased, in wire order. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

/**
 * Starts a node:http server on 127.0.0.1 port 0, sends `request` on a fresh
 * connection, and parses every byte that comes back until the server closes it.
 */
async function rawExchange(
  request: string,
  handlers: { request?: (req: IncomingMessage, res: ServerResponse) => void; connect?: (req: IncomingMessage, socket: Duplex) => void },
): Promise<RawAnswer> {
  const server = createServer(handlers.request);
  if (handlers.connect !== undefined) server.on('connect', handlers.connect);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.write(request));
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => {
        socket.end();
        resolve(Buffer.concat(chunks));
      });
      socket.on('error', reject);
    });
    const text = bytes.toString('utf8');
    const split = text.indexOf('\r\n\r\n');
    const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
    const headers = lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const;
    });
    return { statusLine, headers, body: text.slice(split + 4) };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('error answers', () => {
  it('renders status, content type, byte length, the error\'s own headers and the OpenAI-style body', () => {
    const answer = renderError(shed());
    assert.equal(answer.status, 429);
    assert.deepEqual(Object.entries(answer.headers), EXPECTED_HEADERS);
    assert.equal(answer.body, EXPECTED_BODY);
  });

  it('writes the same answer on a Node ServerResponse, then the caller\'s extra headers', async () => {
    const answer = await rawExchange('GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n', {
      request: (_req, res) => sendError(res, shed(), ['x-request-id', 'r-1']),
    });
    assert.equal(answer.statusLine, 'HTTP/1.1 429 Too Many Requests');
    // Node adds Date and Connection after the answer's own headers.
    assert.deepEqual(answer.headers.slice(0, 5), [...EXPECTED_HEADERS, ['x-request-id', 'r-1']]);
    assert.equal(answer.body, EXPECTED_BODY);
  });

  it('leaves a ServerResponse whose headers already went out alone', async () => {
    const answer = await rawExchange('GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n', {
      request: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        sendError(res, shed());
        res.end();
      },
    });
    assert.equal(answer.statusLine, 'HTTP/1.1 200 OK');
    assert.doesNotMatch(answer.body, /SWITCHYARD_OVERLOADED/);
  });

  it('builds the same answer as a Web Response', async () => {
    const response = errorResponse(shed());
    assert.equal(response.status, 429);
    // Headers iterate in name order whatever order they were set in.
    assert.deepEqual([...response.headers], [...EXPECTED_HEADERS].sort(([a], [b]) => a.localeCompare(b)));
    assert.equal(await response.text(), EXPECTED_BODY);
  });

  it('writes the same answer on a bare socket as a complete HTTP/1.1 response that closes the connection', async () => {
    const answer = await rawExchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', {
      connect: (_req, socket) => endWithError(socket, shed()),
    });
    assert.equal(answer.statusLine, 'HTTP/1.1 429 Too Many Requests');
    assert.deepEqual(answer.headers, [...EXPECTED_HEADERS, ['connection', 'close']]);
    assert.equal(answer.body, EXPECTED_BODY);
  });

  it('takes the reason phrase for each status from Node\'s table', async () => {
    const error = new SwitchyardError('SWITCHYARD_HEADERS_TOO_LARGE', 'The request headers are too large.');
    const answer = await rawExchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', {
      connect: (_req, socket) => endWithError(socket, error),
    });
    assert.equal(answer.statusLine, 'HTTP/1.1 431 Request Header Fields Too Large');
  });
});
