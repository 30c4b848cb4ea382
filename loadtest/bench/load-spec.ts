/**
 * What a load generator is asked to do and what it reports, as plain data:
 * specs and results cross process boundaries when load comes from several
 * generator processes.
 */
import type { HistogramSnapshot } from './histogram.ts';

/** The requests to send. Bodies are built once per process, not per request. */
export interface RequestTemplate {
  /** `/v1/chat/completions` or `/v1/completions`. */
  readonly path: string;
  readonly model: string;
  /** `mixed` alternates streamed and non-streamed requests. */
  readonly stream: boolean | 'mixed';
  /** Offer a function tool the engine answers with a tool call. */
  readonly tools: boolean;
  /** Size of the user prompt in bytes (0 or small: a short question). */
  readonly promptBytes: number;
  /** Extra request headers, e.g. `x-sim-*` engine knobs. */
  readonly headers: Readonly<Record<string, string>>;
  /** Spread requests over this many users, each sent as `x-session-id: user-N`; 0 for none. */
  readonly users: number;
  /** Check that response ids carry the request id (false for peers that rewrite ids). */
  readonly checkIds: boolean;
}

/** Fixed concurrency (each worker sends its next request when the last finished), or a fixed arrival rate. */
export type LoadMode =
  | {
      readonly kind: 'closed';
      readonly concurrency: number;
      /** Each client sends its own `x-session-id` (`<idPrefix>-client-<i>`, one key for all its requests) instead of {@link RequestTemplate.users}' rotation. */
      readonly sessionPerClient?: boolean;
    }
  | {
      readonly kind: 'open';
      /** Poisson arrivals per second once any ramp is over. */
      readonly ratePerS: number;
      /** Linear ramp from this rate to `ratePerS` over `rampMs`, counted from the start (warm-up included). */
      readonly rampFromPerS?: number;
      readonly rampMs?: number;
      /** Connections to the target; arrivals beyond them wait in the generator (and that wait counts as latency). */
      readonly maxConnections: number;
    };

/** One generator's job. Exactly one of `durationMs` and `requests` bounds the measured part. */
export interface LoadSpec {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  readonly target: string;
  readonly request: RequestTemplate;
  readonly mode: LoadMode;
  /** Sent before measuring starts; excluded from the results. */
  readonly warmupMs: number;
  readonly durationMs?: number;
  readonly requests?: number;
  /** Prefix of the `x-request-id` values, unique per generator process. */
  readonly idPrefix: string;
  readonly seed: number;
  /** A new connection for every request (`Connection: close`), as a client without keep-alive opens them. */
  readonly newConnections?: boolean;
}

/** A response that failed validation, kept for inspection. */
export interface FailureExample {
  readonly requestId: string;
  readonly status: number;
  readonly problem: string;
  /** The first bytes of the body (at most 512). */
  readonly bodyHead: string;
}

/** What one generator measured (histograms in milliseconds). */
export interface LoadResult {
  /** Requests started in the measured part. */
  readonly measured: number;
  /** Of those: answered 200 and passed validation. */
  readonly ok: number;
  /** Answered 429 with Retry-After: the router's documented overload answer, not a failure. */
  readonly shed: number;
  /** Everything else: bad status, corrupt body, reset, timeout. */
  readonly failed: number;
  /** Failure counts by kind (`reset`, `corrupt`, `status 502`, ...). */
  readonly failureKinds: Readonly<Record<string, number>>;
  readonly failureExamples: readonly FailureExample[];
  /** End-to-end latency of successful requests; open loop measures from the scheduled send time. */
  readonly e2e: HistogramSnapshot;
  /** Time to the first generated token (streams) or to the response (non-streamed), successful requests. */
  readonly ttft: HistogramSnapshot;
  /** Gaps between successive streamed tokens. */
  readonly itl: HistogramSnapshot;
  /** Open loop: how late requests went out against their schedule. */
  readonly sendLag: HistogramSnapshot;
  /** Successful completions per second of the run, warm-up included (index = second since start). */
  readonly timeline: readonly number[];
  /** Length of the measured window (ms). */
  readonly windowMs: number;
  /** Share of one core this generator process used over the run (0-1). */
  readonly cpuShare: number;
  /** The generator's own event-loop delay p99 (ms): high values mean the generator, not the target, was slow. */
  readonly loopDelayP99Ms: number;
}

/** Live counters a generator reports about once a second. */
export interface LoadProgress {
  readonly elapsedMs: number;
  readonly sent: number;
  readonly ok: number;
  readonly shed: number;
  readonly failed: number;
  readonly e2e: HistogramSnapshot;
}
