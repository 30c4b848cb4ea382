/**
 * Classifies errors from undici into the failure kinds the router acts on:
 * whether a retry on another endpoint is safe, and what the client sees.
 */
import type { UpstreamFailureKind } from '../load/upstream-failure-kinds.ts';

/** The per-request deadline (first byte for streams, whole response otherwise) passed. */
export class UpstreamDeadlineError extends Error {
  override readonly name = 'UpstreamDeadlineError';
  readonly code = 'SWITCHYARD_UPSTREAM_DEADLINE';
}

/** The client went away; the upstream request is aborted with this reason. */
export class ClientAbortError extends Error {
  override readonly name = 'ClientAbortError';
  readonly code = 'SWITCHYARD_CLIENT_ABORT';
}

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);
const RESET_CODES = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED', 'ECONNABORTED']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'SWITCHYARD_UPSTREAM_DEADLINE', 'ETIMEDOUT']);

/** What an upstream error means; `client-abort` is not the engine's fault. */
export type FailureClass = UpstreamFailureKind | 'client-abort' | 'other';

/** Maps an error from undici (or the router's own abort reasons) to a {@link FailureClass}. */
export function classifyUpstreamError(err: unknown): FailureClass {
  if (err instanceof ClientAbortError) return 'client-abort';
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'other';
  if (CONNECT_CODES.has(code)) return 'connect';
  if (RESET_CODES.has(code)) return 'reset';
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  return 'other';
}
