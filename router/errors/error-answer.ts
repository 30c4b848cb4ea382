/**
 * The one renderer of error answers. {@link renderError} turns a
 * {@link SwitchyardError} into status, headers and body; the writers below
 * only put that answer on their target:
 *
 * - {@link sendError}: a raw Node `ServerResponse` (the traffic path).
 * - {@link errorResponse}: a Web `Response` (the Hono control and admin apps,
 *   the admin port's fallback).
 * - {@link endWithError}: a bare socket the HTTP parser has let go of (client
 *   errors, refused tunnels): a complete HTTP/1.1 response, then the end.
 *
 * Every target gets the same status, the same headers and the same bytes, so
 * a client sees one answer whichever layer refused it.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, errorHeaders, type SwitchyardError } from './errors.ts';

/** A rendered error answer: lower-case header names, in the order they are written. */
export interface ErrorAnswer {
  readonly status: number;
  /** `content-type`, `content-length`, then the error's own (`Retry-After`, `Allow`, `WWW-Authenticate`...). */
  readonly headers: Readonly<Record<string, string>>;
  /** The OpenAI-style JSON body ({@link errorBody}). */
  readonly body: string;
}

/** Status, headers and body of the answer to `err`. */
export function renderError(err: SwitchyardError): ErrorAnswer {
  const body = errorBody(err);
  return {
    status: err.status,
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...errorHeaders(err) },
    body,
  };
}

/**
 * Writes `err` as a complete answer on a raw Node response. Does nothing when
 * headers already went out (the caller handles mid-response failures).
 * `extraHeaders` is a flat name/value list written after the error's own.
 */
export function sendError(res: ServerResponse, err: SwitchyardError, extraHeaders: readonly string[] = []): void {
  if (res.headersSent || res.destroyed) return;
  const answer = renderError(err);
  const headers: string[] = [];
  for (const [name, value] of Object.entries(answer.headers)) headers.push(name, value);
  headers.push(...extraHeaders);
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

/** The answer to `err` as a Web `Response`. */
export function errorResponse(err: SwitchyardError): Response {
  const answer = renderError(err);
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * The answer to `err` as the bytes of a complete HTTP/1.1 response that
 * closes its connection (`Connection: close`): on a bare socket nothing can
 * tell where the refused request ends, so no other request may follow it.
 * The reason phrase is Node's own for the status.
 */
export function rawErrorResponse(err: SwitchyardError): string {
  const answer = renderError(err);
  let head = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n`;
  for (const [name, value] of Object.entries(answer.headers)) head += `${name}: ${value}\r\n`;
  return `${head}connection: close\r\n\r\n${answer.body}`;
}

/**
 * Writes {@link rawErrorResponse} on `socket` and ends its writable side. The
 * caller owns the rest of the socket's life: reading what the client still
 * sends, and destroying it.
 */
export function endWithError(socket: Duplex, err: SwitchyardError): void {
  socket.end(rawErrorResponse(err));
}
