import type { EndpointLoad, PolicyDecision, Random, RequestFacts, RoutingPolicy, SaturationTest } from './policy.ts';
import { MAX_ORDERED } from './policy.ts';
import { mix32 } from '../load/hash.ts';
import { eligible, ensureFloat64, ensureUint32, topKIndices } from './select.ts';

/**
 * Lowest load score first, then lowest KV-cache usage, ties at random. With
 * `powerOfTwoChoices`, compares two random endpoints instead of all, which
 * keeps the decision O(1) for very large fleets at a small cost in balance.
 */
export class LeastLoadPolicy implements RoutingPolicy {
  readonly name = 'least-load';
  readonly #random: Random;
  readonly #powerOfTwo: boolean;

  constructor(random: Random, powerOfTwoChoices = false) {
    this.#random = random;
    this.#powerOfTwo = powerOfTwoChoices;
  }

  // Scratch space reused across decisions (never visible outside one call), so ranking
  // hundreds of endpoints allocates nothing per candidate.
  #score = new Float64Array(0);
  #kv = new Float64Array(0);
  #tiebreak = new Uint32Array(0);

  order<T extends EndpointLoad>(_facts: RequestFacts, candidates: readonly T[], _saturated?: SaturationTest<T>): PolicyDecision<T> {
    const pool = eligible(candidates);
    const n = pool.length;
    const salt = (this.#random() * 0x100000000) >>> 0;
    const score = (this.#score = ensureFloat64(this.#score, n));
    const kv = (this.#kv = ensureFloat64(this.#kv, n));
    const tiebreak = (this.#tiebreak = ensureUint32(this.#tiebreak, n));
    // Each endpoint's derived load is read once, not once per comparison; the random
    // tiebreak lets equal endpoints take turns.
    const fill = (i: number) => {
      const endpoint = pool[i] as T;
      score[i] = endpoint.loadScore;
      kv[i] = endpoint.kvCacheUsage;
      tiebreak[i] = mix32(salt, endpoint.idHash);
    };
    const better = (i: number, j: number) =>
      score[i] !== score[j] ? (score[i] as number) < (score[j] as number) : kv[i] !== kv[j] ? (kv[i] as number) < (kv[j] as number) : (tiebreak[i] as number) < (tiebreak[j] as number);
    if (this.#powerOfTwo && n > 2) {
      const i = Math.floor(this.#random() * n);
      const j = (i + 1 + Math.floor(this.#random() * (n - 1))) % n;
      fill(i);
      fill(j);
      return { ordered: better(j, i) ? [pool[j] as T, pool[i] as T] : [pool[i] as T, pool[j] as T], outcome: 'least_load' };
    }
    for (let i = 0; i < n; i++) fill(i);
    return { ordered: topKIndices(n, MAX_ORDERED, better).map((i) => pool[i] as T), outcome: 'least_load' };
  }
}
