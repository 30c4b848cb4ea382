/**
 * The one error hierarchy of switchyard. Every error a client can see is a
 * {@link SwitchyardError} with a stable `code`; {@link errorBody} renders it in
 * the OpenAI shape `{"error":{"message","type","param","code"}}`.
 *
 * Messages are written for clients: they never carry upstream error text,
 * internal addresses or stack traces.
 */

/** Stable machine-readable codes. Clients and dashboards may match on them. */
export type ErrorCode =
  | 'SWITCHYARD_INVALID_JSON'
  | 'SWITCHYARD_INVALID_UTF8'
  | 'SWITCHYARD_INVALID_BODY'
  | 'SWITCHYARD_MISSING_MODEL'
  | 'SWITCHYARD_NESTING_TOO_DEEP'
  | 'SWITCHYARD_BODY_TOO_LARGE'
  | 'SWITCHYARD_BODY_BUDGET'
  | 'SWITCHYARD_REQUEST_TIMEOUT'
  | 'SWITCHYARD_HEADERS_TOO_LARGE'
  | 'SWITCHYARD_BAD_REQUEST'
  | 'SWITCHYARD_MODEL_NOT_FOUND'
  | 'SWITCHYARD_NOT_FOUND'
  | 'SWITCHYARD_RESPONSE_NOT_FOUND'
  | 'SWITCHYARD_METHOD_NOT_ALLOWED'
  | 'SWITCHYARD_EXPECTATION_FAILED'
  | 'SWITCHYARD_UNAUTHORIZED'
  | 'SWITCHYARD_OVERLOADED'
  | 'SWITCHYARD_QUEUE_TIMEOUT'
  | 'SWITCHYARD_ROUTER_BUSY'
  | 'SWITCHYARD_EVENT_LOOP_LAG'
  | 'SWITCHYARD_QUOTA_EXCEEDED'
  | 'SWITCHYARD_NO_ENDPOINT'
  | 'SWITCHYARD_DRAINING'
  | 'SWITCHYARD_UPSTREAM_UNREACHABLE'
  | 'SWITCHYARD_UPSTREAM_TIMEOUT'
  | 'SWITCHYARD_UPSTREAM_FAILED'
  | 'SWITCHYARD_INTERNAL';

/** OpenAI error `type` values used by switchyard. */
export type ErrorType =
  | 'invalid_request_error'
  | 'not_found_error'
  | 'rate_limit_exceeded'
  | 'service_unavailable'
  | 'upstream_error'
  | 'internal_error';

interface ErrorSpec {
  readonly status: number;
  readonly type: ErrorType;
}

/** The single place where error codes map to HTTP statuses. */
const SPECS: Readonly<Record<ErrorCode, ErrorSpec>> = {
  SWITCHYARD_INVALID_JSON: { status: 400, type: 'invalid_request_error' },
  SWITCHYARD_INVALID_UTF8: { status: 400, type: 'invalid_request_error' },
  SWITCHYARD_INVALID_BODY: { status: 400, type: 'invalid_request_error' },
  SWITCHYARD_MISSING_MODEL: { status: 400, type: 'invalid_request_error' },
  SWITCHYARD_NESTING_TOO_DEEP: { status: 400, type: 'invalid_request_error' },
  SWITCHYARD_BODY_TOO_LARGE: { status: 413, type: 'invalid_request_error' },
  SWITCHYARD_BODY_BUDGET: { status: 429, type: 'rate_limit_exceeded' },
  SWITCHYARD_REQUEST_TIMEOUT: { status: 408, type: 'invalid_request_error' },
  SWITCHYARD_HEADERS_TOO_LARGE: { status: 431, type: 'invalid_request_error' },
  SWITCHYARD_BAD_REQUEST: { status: 400, type: 'invalid_request_error' },
  SWITCHYARD_MODEL_NOT_FOUND: { status: 404, type: 'not_found_error' },
  SWITCHYARD_NOT_FOUND: { status: 404, type: 'not_found_error' },
  // A `previous_response_id` another tenant's request stored (router/request/response-pins.ts): answered
  // as vLLM answers an id it does not hold (its type too), and never forwarded.
  SWITCHYARD_RESPONSE_NOT_FOUND: { status: 404, type: 'invalid_request_error' },
  SWITCHYARD_METHOD_NOT_ALLOWED: { status: 405, type: 'invalid_request_error' },
  SWITCHYARD_EXPECTATION_FAILED: { status: 417, type: 'invalid_request_error' },
  // Missing or wrong admin token or API key; the answer carries WWW-Authenticate (server/admin-auth.ts, request/tenant-gate.ts).
  SWITCHYARD_UNAUTHORIZED: { status: 401, type: 'invalid_request_error' },
  SWITCHYARD_OVERLOADED: { status: 429, type: 'rate_limit_exceeded' },
  SWITCHYARD_QUEUE_TIMEOUT: { status: 429, type: 'rate_limit_exceeded' },
  SWITCHYARD_ROUTER_BUSY: { status: 429, type: 'rate_limit_exceeded' },
  SWITCHYARD_EVENT_LOOP_LAG: { status: 429, type: 'rate_limit_exceeded' },
  // The API key's tenant is over its request rate or concurrency quota (router/state/quota.ts).
  SWITCHYARD_QUOTA_EXCEEDED: { status: 429, type: 'rate_limit_exceeded' },
  SWITCHYARD_NO_ENDPOINT: { status: 503, type: 'service_unavailable' },
  SWITCHYARD_DRAINING: { status: 503, type: 'service_unavailable' },
  SWITCHYARD_UPSTREAM_UNREACHABLE: { status: 502, type: 'upstream_error' },
  SWITCHYARD_UPSTREAM_TIMEOUT: { status: 504, type: 'upstream_error' },
  SWITCHYARD_UPSTREAM_FAILED: { status: 502, type: 'upstream_error' },
  SWITCHYARD_INTERNAL: { status: 500, type: 'internal_error' },
};

/** Options for {@link SwitchyardError}. */
export interface SwitchyardErrorOptions {
  /** The request field the error is about, e.g. `model`. */
  readonly param?: string;
  /** Whole seconds (≥ 1) for the `Retry-After` header; set for 429 and 503. */
  readonly retryAfterSeconds?: number;
  /** Extra response headers, e.g. `Allow` for 405. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An error whose message is safe to show to the client. */
export class SwitchyardError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: ErrorCode, message: string, options: SwitchyardErrorOptions = {}) {
    super(message);
    this.name = 'SwitchyardError';
    const spec = SPECS[code];
    this.code = code;
    this.status = spec.status;
    this.type = spec.type;
    this.param = options.param ?? null;
    this.retryAfterSeconds =
      options.retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(options.retryAfterSeconds));
    this.headers = options.headers;
  }
}

/** The JSON text of an OpenAI-style error body for `err`. */
export function errorBody(err: SwitchyardError): string {
  return JSON.stringify({
    error: { message: err.message, type: err.type, param: err.param, code: err.code },
  });
}

/** Response headers (besides content type) that go with `err`. */
export function errorHeaders(err: SwitchyardError): Record<string, string> {
  const headers: Record<string, string> = { ...err.headers };
  if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
  return headers;
}

/**
 * Converts anything thrown into a client-safe error: a {@link SwitchyardError}
 * passes through, anything else becomes a generic 500 whose message reveals nothing.
 */
export function toSwitchyardError(err: unknown): SwitchyardError {
  if (err instanceof SwitchyardError) return err;
  return new SwitchyardError('SWITCHYARD_INTERNAL', 'The router failed to handle the request.');
}
