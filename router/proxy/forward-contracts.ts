/**
 * The forwarder's contracts: the collaborators it is built with, the request
 * it is handed and the outcome it reports. Apart from forwarder.ts so the
 * request lifecycle can depend on them without the forwarding machinery.
 */
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { EndpointState } from '../load/endpoint-state.ts';
import type { UpstreamFailureKind } from '../load/upstream-failure-kinds.ts';
import type { RetryReason } from '../metrics/label-values.ts';
import type { AuthorizationRule } from './headers.ts';
import type { RetryBudget } from './retry-budget.ts';
import type { FailureClass } from './upstream-failure.ts';

/** Timeouts the forwarder applies, in milliseconds. */
export interface ForwardTimeouts {
  readonly streamFirstByteMs: number;
  readonly streamChunkGapMs: number;
  readonly responseMs: number;
}

/** The load view as the forwarder uses it. */
export interface LoadRecorder {
  /** Returns a token to pass back to `settle`. */
  begin(state: EndpointState): number;
  /** A stream's first response body byte arrived `ttfbMs` after the attempt was sent (never for non-streamed requests, whose first byte is the whole answer). */
  firstByte(state: EndpointState, token: number, ttfbMs: number): void;
  settle(state: EndpointState, token: number, failure?: UpstreamFailureKind, serviceMs?: number): void;
}

/** The metrics the forwarder records. */
export interface ForwardMetrics {
  observeTimings(route: string, model: string, durationS: number, ttfbS: number | undefined): void;
  /** Time to first token (s) of a streamed request answered 2xx. */
  observeFirstToken(route: string, model: string, seconds: number): void;
  /** Takes the endpoint, not its id: a failure after it left the set must not bring its series back. */
  countUpstreamError(backend: EndpointState, kind: UpstreamFailureKind): void;
  countRetry(reason: RetryReason): void;
}

/** Long-lived collaborators of the forwarder. */
export interface ForwarderDeps {
  readonly dispatcher: Dispatcher;
  readonly load: LoadRecorder;
  readonly metrics: ForwardMetrics;
  readonly timeouts: ForwardTimeouts;
  /** Retry on another endpoint at all (config), and the budget each retry draws from. */
  readonly retry: boolean;
  readonly retryBudget: RetryBudget;
  readonly requestIdHeader: string;
  /** How the Authorization header to `target` is chosen (by its discovery source); called once per attempt. */
  readonly authorizationFor: (target: EndpointState) => AuthorizationRule;
  /** Called for failures worth an operator's attention, with the request's id; never gets bodies or secrets. */
  readonly onUpstreamFailure: (backend: string, kind: FailureClass, err: unknown, requestId: string) => void;
  /** Response header that names the endpoint which answered (its {@link ForwarderDeps.endpointName}); undefined: none. */
  readonly endpointHeader?: string | undefined;
  /** The name an endpoint goes by in that header: never its address. */
  readonly endpointName?: ((target: EndpointState) => string) | undefined;
}

/** How an exchange ended, for the access log and the request's own bookkeeping. */
export interface ForwardOutcome {
  /** Status the client got (0 if none). */
  readonly status: number;
  /** The endpoint of the last attempt. */
  readonly endpoint: EndpointState;
  /** Why the request went to a second endpoint, if it did. */
  readonly retry: RetryReason | undefined;
  /** The upstream failure that ended the exchange (the last attempt's), if one did. */
  readonly failure: FailureClass | undefined;
  /** `performance.now()` of the first response byte sent to the client. */
  readonly firstByteAt: number | undefined;
  /** Response body bytes sent to the client (the router's own error body not included). */
  readonly bytes: number;
}

/** One admitted request, ready to go upstream. */
export interface ForwardRequest {
  readonly res: ServerResponse;
  /** Path and query to request on the engine (the endpoint's base path is prepended). */
  readonly path: string;
  /**
   * Upstream request headers (flat name/value list) without Authorization.
   * Handed over to the forwarder: the first attempt appends its endpoint's
   * Authorization pair to this very list (no copy on the hot path).
   */
  readonly headers: string[];
  /** The client's Authorization header, forwarded only to endpoints whose source's rule says so. */
  readonly clientAuthorization: string | undefined;
  /** The original body bytes, replayed unchanged on retry. */
  readonly body: Buffer;
  readonly stream: boolean;
  readonly requestId: string;
  /** Endpoints to try in order: the first, then at most one retry target. */
  readonly attempts: readonly EndpointState[];
  /** Metric labels. */
  readonly route: string;
  readonly modelLabel: string;
  /** `performance.now()` when the request arrived. */
  readonly arrivedAt: number;
  /** Called exactly once when the exchange is over. */
  readonly onDone: (outcome: ForwardOutcome) => void;
  /**
   * Called with the body chunks of a successful (2xx) answer and the endpoint
   * that sent it, from the first, for as long as it returns true; must not
   * keep or change the chunk.
   */
  readonly onAnswerBytes?: ((target: EndpointState, chunk: Buffer) => boolean) | undefined;
}
