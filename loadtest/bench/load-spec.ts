/**
 * What a load generator is asked to do and what it reports, as plain data:
 * specs and results cross process boundaries when load comes from several
 * generator processes.
 */
import type { HistogramSnapshot } from './histogram.ts';
import type { SecondStats } from './per-second.ts';

/** An inclusive range of token counts, drawn uniformly per request; `min` = `max` for a fixed count. */
export interface TokenRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Token-shaped requests (`switchyard bench load`): each request draws its
 * prompt and answer lengths, asks for the answer's length with `max_tokens`
 * and, streamed, for its token counts with `stream_options.include_usage`.
 * Approximate: there is no tokenizer, a token is taken as about 4 characters
 * of prompt text (request-bodies.ts).
 */
export interface RequestShape {
  /** Tokens of new prompt text per request (per turn, in a conversation). */
  readonly promptTokens: TokenRange;
  /** The `max_tokens` each request asks for. */
  readonly outputTokens: TokenRange;
  /** Send vLLM's `ignore_eos: true`, so answers run to `max_tokens` instead of ending where the model would. */
  readonly ignoreEos: boolean;
  /**
   * Turns per conversation. Above 1, each session (see
   * {@link RequestTemplate.users}) resends its history, the answers
   * included, with a new question each turn, and starts over after this many.
   */
  readonly turns: number;
}

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
  /**
   * Spread requests over this many users, each sent as `x-session-id: user-N`;
   * 0 for none. With a {@link shape}, the users are sessions each generator
   * process keeps of its own (split among processes like the load), sent as
   * `<idPrefix>-session-N`.
   */
  readonly users: number;
  /** Check that response ids carry the request id (false for peers that rewrite ids). */
  readonly checkIds: boolean;
  /** Token-shaped requests; when set, `promptBytes` is not used. */
  readonly shape?: RequestShape;
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
  /** The rest of each second of `timeline`: failures, output tokens, TTFT and inter-token gaps of the requests that ended in it. */
  readonly seconds: readonly SecondStats[];
  /** Token counts of the measured successful requests. */
  readonly tokens: TokenCounts;
  /** Length of the measured window (ms). */
  readonly windowMs: number;
  /** Share of one core this generator process used over the run (0-1). */
  readonly cpuShare: number;
  /** The generator's own event-loop delay p99 (ms): high values mean the generator, not the target, was slow. */
  readonly loopDelayP99Ms: number;
}

/** Token counts of successful requests. */
export interface TokenCounts {
  /** Output tokens per request: as the answer's `usage` reported them, else counted (a streamed content event each, ~4 characters each when not streamed). */
  readonly output: HistogramSnapshot;
  /** Requests whose output count came from a `usage` report. */
  readonly fromUsage: number;
  /** Prompt tokens per request as `usage` reported them (requests without a report are left out). */
  readonly prompt: HistogramSnapshot;
  /** Sum of the `max_tokens` asked for (shaped requests; 0 otherwise). */
  readonly askedOutput: number;
  /** Sum of the prompt tokens sent, history included, at ~4 characters a token (shaped requests; 0 otherwise). */
  readonly askedPrompt: number;
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
