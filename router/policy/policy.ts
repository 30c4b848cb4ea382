/**
 * The routing policy contract. A policy is pure: given the request's facts
 * and the candidate endpoints (already filtered to routable endpoints that
 * serve the request's model), it returns some of them ordered, first choice
 * first. No I/O, no clocks, no globals; randomness comes in through
 * {@link Random}.
 */

/** What routing may know about a request. Built once per request. */
export interface RequestFacts {
  /** The `model` the request names (or the default model). */
  readonly model: string;
  /** The body asked for `stream: true`. */
  readonly stream: boolean;
  /** Session key (header, else the body's `user`), if any. */
  readonly sessionKey: string | undefined;
  /** Request body size in bytes. */
  readonly bodyBytes: number;
}

/** The part of an endpoint's live state a policy reads. */
export interface EndpointLoad {
  readonly id: string;
  /** 32-bit hash of `id`, for rendezvous hashing. */
  readonly idHash: number;
  /** Requests the router has open to the endpoint right now. */
  readonly inFlight: number;
  /** Outstanding work over capacity (see load-formulas.ts); lower is better. */
  readonly loadScore: number;
  /** KV-cache usage 0-1 (0 when unknown). */
  readonly kvCacheUsage: number;
  /** Taken out of routing after repeated failures. */
  readonly ejected: boolean;
}

/** Returns a float in [0, 1). Injected so tests are deterministic. */
export type Random = () => number;

/** How a decision was reached; the `outcome` label of the decisions metric. */
export type DecisionOutcome = 'least_load' | 'round_robin' | 'affinity_hit' | 'affinity_spill' | 'no_key_fallback';

/** A policy's answer. */
export interface PolicyDecision<T> {
  /** Candidates to try, best first: a non-empty subset when any candidate was given. */
  readonly ordered: T[];
  readonly outcome: DecisionOutcome;
}

/** Whether an endpoint should take no more work now (from admission's thresholds). */
export type SaturationTest<T> = (endpoint: T) => boolean;

/** A routing policy. */
export interface RoutingPolicy {
  /** Name used in config and metrics. */
  readonly name: string;
  /**
   * Orders `candidates` best first. Never mutates the input. Candidates are
   * all eligible (not ejected) unless every candidate is ejected.
   */
  order<T extends EndpointLoad>(facts: RequestFacts, candidates: readonly T[], saturated: SaturationTest<T>): PolicyDecision<T>;
}

/** Most candidates a policy returns: the first choice plus fallbacks for retry and admission. */
export const MAX_ORDERED = 8;
