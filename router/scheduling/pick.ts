/**
 * The contracts between a scheduling profile's stages: what a scorer or
 * picker sees of one decision, and what a picker answers.
 */
import type { Candidate, DecisionOutcome, RequestFacts } from './candidate.ts';
import type { HomeRoom } from './saturation.ts';

/** One decision as scorers and pickers see it. Valid for the duration of one synchronous call. */
export interface PickContext<T extends Candidate> {
  readonly facts: RequestFacts;
  /** The model's candidates, as the load view holds them. Never mutated. */
  readonly candidates: readonly T[];
  /** Indices into `candidates` of the ones the filters kept, positions 0..n-1. */
  readonly pool: Uint32Array;
  readonly n: number;
  /** Mean load score of the pool: the load bound's reference (computed on first read). */
  readonly meanLoad: number;
  /**
   * The saturation filter for the request's priority, applied lazily: a
   * picker's first choices are tested, not the whole fleet. A walk skips
   * saturated candidates; the profile guarantees the final target is not.
   */
  saturated(candidate: T): boolean;
  /** What the request's own engine (its affinity walk's first choice) can do for it; see {@link HomeRoom}. */
  homeRoom(candidate: T): HomeRoom;
}

/** A picker's answer. */
export interface Pick<T> {
  /** Candidates to try, best first, at most MAX_ORDERED; the rest after the first is the retry list. */
  readonly ordered: T[];
  readonly outcome: DecisionOutcome;
  /** The first of `ordered` is the request's own engine, taken although the safe start limits new work there. */
  readonly keepsHome?: boolean;
  /** The request's own engine, at its burst bound and otherwise fit: the request waits for it instead of moving. */
  readonly waitsFor?: T | undefined;
}

/**
 * Chooses the order to try candidates in. A picker that does not apply to a
 * request (an affinity walk without a key) returns undefined and names the
 * outcome its fallback is counted under; the profile then asks the next.
 */
export interface Picker {
  pick<T extends Candidate>(context: PickContext<T>): Pick<T> | undefined;
  /** Outcome recorded when this picker declined and a later one decided; undefined: the later one's own. */
  readonly declinedOutcome?: DecisionOutcome | undefined;
}

/**
 * A profile's own filter (a plugin, run after the built-in ones): which
 * candidates may take a request. It narrows, never refuses: when it would
 * keep none, the profile keeps the pool it had, since refusing is for the
 * saturation filter and admission (a request no filter-passing engine can
 * serve is better served elsewhere than shed).
 */
export interface CandidateFilter {
  readonly name: string;
  /** True when `candidate` may take the request. Called per pooled candidate on every decision: allocate nothing. */
  keeps(facts: RequestFacts, candidate: Candidate): boolean;
}

/** A scorer that rates each pooled candidate in [0, 1] (higher is better), for the weighted maximum. */
export interface RatingScorer {
  readonly name: string;
  /** Writes the rating of pool position i into `out[i]` for i < n. */
  rate<T extends Candidate>(context: PickContext<T>, out: Float64Array): void;
}

/**
 * A scorer with a deterministic order of candidates for a request (the same
 * on every replica that sees the same endpoints), for the bounded walk.
 */
export interface OrderingScorer {
  readonly name: string;
  /** Outcomes of a walk over this scorer's order: first choice taken, walked on, or declined. */
  /** `declined` undefined: a request the walk does not apply to is no decision of its kind, and the other walks' outcome stands. */
  readonly outcomes: { readonly hit: DecisionOutcome; readonly spill: DecisionOutcome; readonly declined: DecisionOutcome | undefined };
  /** False when the request gives this scorer nothing to go on (no session key, no prompt). */
  applies(facts: RequestFacts): boolean;
  /**
   * Writes up to `max` pool positions into `order`, first choice first, and
   * for each the cache credit (0-1) that lets that candidate carry more load
   * before affinity yields (see load-bound.ts). Returns how many it wrote.
   */
  order<T extends Candidate>(context: PickContext<T>, max: number, order: Uint32Array, credit: Float64Array): number;
}
