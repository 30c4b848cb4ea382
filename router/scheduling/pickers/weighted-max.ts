/**
 * Picker: the weighted maximum of rating scorers, ties broken by a seeded
 * random salt so equal endpoints take turns. With `sample` 2 it compares two
 * random candidates instead of all (power of two choices), which keeps the
 * decision O(1) for very large fleets at a small cost in balance.
 */
import { mix32 } from '../../load/hash.ts';
import { MAX_ORDERED, type Candidate, type DecisionOutcome, type Random } from '../candidate.ts';
import type { Pick, Picker, PickContext, RatingScorer } from '../pick.ts';
import { ensureFloat64, ensureUint32, topKInto } from '../select.ts';

/** A scorer and its weight (≥ 0) in the sum. */
export interface WeightedScorer {
  readonly scorer: RatingScorer;
  readonly weight: number;
}

export class WeightedMaxPicker implements Picker {
  readonly #scorers: readonly WeightedScorer[];
  readonly #random: Random;
  readonly #sampleTwo: boolean;
  readonly #outcome: DecisionOutcome;
  // Scratch reused across decisions: never visible outside one call.
  #total = new Float64Array(0);
  #rating = new Float64Array(0);
  #tiebreak = new Uint32Array(0);
  #order = new Uint32Array(MAX_ORDERED);
  readonly #pair = new Uint32Array(2);

  constructor(scorers: readonly WeightedScorer[], random: Random, options: { readonly sampleTwo?: boolean; readonly outcome?: DecisionOutcome } = {}) {
    this.#scorers = scorers.filter((s) => s.weight > 0);
    this.#random = random;
    this.#sampleTwo = options.sampleTwo ?? false;
    this.#outcome = options.outcome ?? 'least_load';
  }

  pick<T extends Candidate>(context: PickContext<T>): Pick<T> {
    const { candidates, pool, n } = context;
    const salt = (this.#random() * 0x100000000) >>> 0;
    if (this.#sampleTwo && n > 2) return this.#pickOfTwo(context, salt);
    const total = this.#rate(context);
    const tiebreak = (this.#tiebreak = ensureUint32(this.#tiebreak, n));
    for (let i = 0; i < n; i++) tiebreak[i] = mix32(salt, (candidates[pool[i] as number] as T).idHash);
    const count = topKInto(this.#order, n, MAX_ORDERED, (i, j) =>
      total[i] !== total[j] ? (total[i] as number) > (total[j] as number) : (tiebreak[i] as number) < (tiebreak[j] as number),
    );
    const ordered: T[] = new Array<T>(count);
    for (let p = 0; p < count; p++) ordered[p] = candidates[pool[this.#order[p] as number] as number] as T;
    return { ordered, outcome: this.#outcome };
  }

  /** Sums the weighted ratings of pool positions 0..n-1 into the total scratch. */
  #rate<T extends Candidate>(context: PickContext<T>): Float64Array {
    const n = context.n;
    const total = (this.#total = ensureFloat64(this.#total, n));
    total.fill(0, 0, n);
    const rating = (this.#rating = ensureFloat64(this.#rating, n));
    for (const { scorer, weight } of this.#scorers) {
      scorer.rate(context, rating);
      for (let i = 0; i < n; i++) total[i] = (total[i] as number) + weight * (rating[i] as number);
    }
    return total;
  }

  #pickOfTwo<T extends Candidate>(context: PickContext<T>, salt: number): Pick<T> {
    const { candidates, pool, n } = context;
    const i = Math.floor(this.#random() * n);
    const j = (i + 1 + Math.floor(this.#random() * (n - 1))) % n;
    // Rate just the two, as a two-candidate pool.
    const pair = this.#pair;
    pair[0] = pool[i] as number;
    pair[1] = pool[j] as number;
    const total = this.#rate({ ...context, pool: pair, n: 2 });
    const a = candidates[pool[i] as number] as T;
    const b = candidates[pool[j] as number] as T;
    const bFirst = total[1] !== total[0] ? (total[1] as number) > (total[0] as number) : mix32(salt, b.idHash) < mix32(salt, a.idHash);
    return { ordered: bFirst ? [b, a] : [a, b], outcome: this.#outcome };
  }
}
