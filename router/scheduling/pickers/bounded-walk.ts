/**
 * Picker: a walk of one ordering scorer's deterministic order, taking the
 * first candidate under the load bound (load-bound.ts). This is how session
 * affinity and prefix placement keep replicas agreeing: the order depends only
 * on the request and the endpoint set, the bound only on the load view. The
 * walk's order after its pick is the retry list. When the scorer does not
 * apply to the request, the walk declines and the profile's next picker decides.
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
    let first = -1;
    for (let p = 0; p < count; p++) {
      const candidate = candidates[pool[this.#order[p] as number] as number] as T;
      ranked[p] = candidate;
      if (first < 0 && !context.saturated(candidate) && candidate.loadScore <= loadLimit(this.#bound, context.meanLoad, this.#credit[p] as number)) first = p;
    }
    const { hit, spill } = this.#scorer.outcomes;
    if (first === 0) return { ordered: ranked, outcome: hit };
    // Every ranked candidate is saturated or over the bound: keep the scorer's order; the profile skips saturated ones.
    if (first < 0) return { ordered: ranked, outcome: spill };
    return { ordered: [...ranked.slice(first), ...ranked.slice(0, first)], outcome: spill };
  }
}
