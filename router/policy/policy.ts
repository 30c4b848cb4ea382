/**
 * The routing policy contract. A policy is pure: given the request's facts
 * and the candidate endpoints (already filtered to the request's model and to
 * routable endpoints), it returns them ordered, first choice first. No I/O,
 * no clocks, no globals; randomness comes in through {@link Random}.
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
  /** Requests the router has open to the endpoint right now. */
  readonly inFlight: number;
}

/** Returns a float in [0, 1). Injected so tests are deterministic. */
export type Random = () => number;

/** A routing policy. */
export interface RoutingPolicy {
  /** Name used in config and metrics. */
  readonly name: string;
  /**
   * Orders `candidates` best first. Returns a new array holding a subset of
   * `candidates` (normally all of them); never mutates the input.
   */
  order<T extends EndpointLoad>(facts: RequestFacts, candidates: readonly T[]): T[];
}
