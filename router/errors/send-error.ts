import type { ServerResponse } from 'node:http';
import { errorBody, errorHeaders, type SwitchyardError } from './errors.ts';

/**
 * Writes `err` as a complete OpenAI-style JSON error response on a raw Node
 * response. Does nothing when headers already went out (the caller handles
 * mid-response failures). `extraHeaders` is a flat name/value list.
 */
export function sendError(res: ServerResponse, err: SwitchyardError, extraHeaders: readonly string[] = []): void {
  if (res.headersSent || res.destroyed) return;
  const body = errorBody(err);
  const headers: string[] = ['content-type', 'application/json', 'content-length', String(Buffer.byteLength(body))];
  for (const [name, value] of Object.entries(errorHeaders(err))) headers.push(name, value);
  headers.push(...extraHeaders);
  res.writeHead(err.status, headers);
  res.end(body);
}
