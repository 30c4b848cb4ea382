/**
 * Picker: a walk of one ordering scorer's deterministic order, taking the
 * first candidate under the load bound (load-bound.ts). This is how session
 * affinity and prefix placement keep replicas agreeing: the order depends only
 * on the request and the endpoint set, the bound only on the load view. The
 * walk's order after its pick is the retry list. When the scorer does not
 * apply to the request, the walk declines and the profile's next picker decides.
 *
 * The first in the order is the request's own engine (for a prefix walk,
 * only when it holds cache credit): under the load bound it keeps the
 * request whatever the safe start says of new work, and at its burst bound
 * the walk answers that the request should wait for it (see
 * ../saturation.ts, homeRoom). Only an engine that really fails a
 * filter, or carries more than the load bound allows, lets it walk on.
 */
import { MAX_ORDERED, type Candidate } from '../candidate.ts';
import { loadLimit, type LoadBound } from '../load-bound.ts';
import type { OrderingScorer, Pick, Picker, PickContext } from '../pick.ts';

export class BoundedWalkPicker implements Picker {
  readonly #scorer: OrderingScorer;
  readonly #bound: LoadBound;
  readonly declinedOutcome;
  readonly #order = new Uint32Array(MAX_ORDERED);
  readonly #credit = new Float64Array(MAX_ORDERED);

  constructor(scorer: OrderingScorer, bound: LoadBound) {
    this.#scorer = scorer;
    this.#bound = bound;
    this.declinedOutcome = scorer.outcomes.declined;
  }

  pick<T extends Candidate>(context: PickContext<T>): Pick<T> | undefined {
    if (!this.#scorer.applies(context.facts)) return undefined;
    const { candidates, pool } = context;
    const count = this.#scorer.order(context, MAX_ORDERED, this.#order, this.#credit);
    if (count === 0) return undefined;
    const ranked: T[] = new Array<T>(count);
    for (let p = 0; p < count; p++) ranked[p] = candidates[pool[this.#order[p] as number] as number] as T;
    const { hit, spill } = this.#scorer.outcomes;
    let first = -1;
    for (let p = 0; p < count && first < 0; p++) {
      const candidate = ranked[p] as T;
      if (candidate.loadScore > loadLimit(this.#bound, context.meanLoad, this.#credit[p] as number)) continue;
      if (p > 0 || !this.#isHome()) {
        if (!context.saturated(candidate)) first = p;
        continue;
      }
      const room = context.homeRoom(candidate);
      if (room === 'wait') return { ordered: ranked, outcome: hit, waitsFor: candidate };
      if (room === 'keep') return { ordered: ranked, outcome: hit, keepsHome: true };
    }
    if (first === 0) return { ordered: ranked, outcome: hit };
    // Every ranked candidate is saturated or over the bound: keep the scorer's order; the profile skips saturated ones.
    if (first < 0) return { ordered: ranked, outcome: spill };
    return { ordered: [...ranked.slice(first), ...ranked.slice(0, first)], outcome: spill };
  }

  /** The first choice is the request's own engine: always for a session; for a prefix walk only with cache credit there. */
  #isHome(): boolean {
    return this.#bound.creditFloorOnly !== true || (this.#credit[0] as number) > 0;
  }
}
