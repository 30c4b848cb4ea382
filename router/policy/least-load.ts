import type { EndpointLoad, PolicyDecision, Random, RequestFacts, RoutingPolicy, SaturationTest } from './policy.ts';
import { MAX_ORDERED } from './policy.ts';
import { mix32 } from '../load/hash.ts';
import { eligible, topK } from './select.ts';

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

  order<T extends EndpointLoad>(_facts: RequestFacts, candidates: readonly T[], _saturated?: SaturationTest<T>): PolicyDecision<T> {
    const pool = eligible(candidates);
    const salt = (this.#random() * 0x100000000) >>> 0;
    const better = (a: T, b: T) =>
      a.loadScore !== b.loadScore
        ? a.loadScore < b.loadScore
        : a.kvCacheUsage !== b.kvCacheUsage
          ? a.kvCacheUsage < b.kvCacheUsage
          : mix32(salt, a.idHash) < mix32(salt, b.idHash);
    if (this.#powerOfTwo && pool.length > 2) {
      const i = Math.floor(this.#random() * pool.length);
      const j = (i + 1 + Math.floor(this.#random() * (pool.length - 1))) % pool.length;
      const a = pool[i] as T;
      const b = pool[j] as T;
      return { ordered: better(b, a) ? [b, a] : [a, b], outcome: 'least_load' };
    }
    return { ordered: topK(pool, MAX_ORDERED, better), outcome: 'least_load' };
  }
}
