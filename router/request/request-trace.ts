/**
 * What the request lifecycle needs of tracing, declared here by its
 * consumer: a span per request that it marks at each stage and ends with
 * the request's access record. The OpenTelemetry implementation lives in
 * router/tracing and is loaded only when tracing is on; with it off the
 * lifecycle holds no tracer and the client's trace context passes through.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AccessRecord } from './access-log.ts';
import type { RequestHook } from './request-hooks.ts';

/** The start of one request's span. Times are `performance.now()` milliseconds. */
export interface TraceStart {
  readonly method: string;
  /** The route (`/v1/chat/completions`): the span's name and `http.route`. */
  readonly route: string;
  /** The client's headers: `traceparent` and `tracestate` are read from them. */
  readonly headers: IncomingHttpHeaders;
  /** The client is a trusted proxy (`server.trustedProxies`): only then do its sampled flag and `tracestate` count. */
  readonly trustedParent: boolean;
  readonly requestId: string;
  readonly at: number;
}

/** Stages a span marks as events, besides its start and end. */
export type TraceStage = 'admitted' | 'scheduled';

/** Attribute values a stage may carry: names and numbers, never a body, a prompt, a key or a header. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** One request's span; every method is cheap when the span is not sampled. */
export interface RequestTrace {
  /** `traceparent` (and `tracestate`) naming this span, to send to the engine in place of the client's; a flat name/value list. */
  readonly upstreamHeaders: readonly string[];
  /** False when the span is not sampled: stages and the end record nothing (callers skip building their attributes). */
  readonly recording: boolean;
  /** Marks a stage passed at `at`. */
  stage(stage: TraceStage, at: number, attributes?: TraceAttributes): void;
  /** Ends the span with what the access log records of the request (`at`: its end). */
  end(record: AccessRecord, at: number): void;
}

/** Starts request spans. */
export interface RequestTracer {
  start(request: TraceStart): RequestTrace;
}

/**
 * Ends each request's span with its access record, as a request hook (over), registered only
 * with a tracer. A request that reached an engine has its record built for the span only when
 * the span is recording (sampled); one the router answered itself ends its span either way.
 */
export const spanEnd: RequestHook = {
  wantsRecord: (trace) => trace?.recording === true,
  over: (record, trace) => trace?.end(record, performance.now()),
};
