import type { EndpointLoad, PolicyDecision, RequestFacts, RoutingPolicy, SaturationTest } from './policy.ts';
import { MAX_ORDERED } from './policy.ts';
import { hashString, mix32 } from '../load/hash.ts';
import { eligible, ensureUint32, topKIndices } from './select.ts';

/**
 * A pod under this load score is never left by the balance rule: it has free
 * batch slots, so keeping the conversation where its KV cache lives wins.
 */
const BALANCE_FLOOR = 0.5;

/**
 * Session affinity by rendezvous (highest-random-weight) hashing: every
 * replica ranks the endpoints for a key the same way with no shared state,
 * and when an endpoint joins or leaves only the keys whose top choice it is
 * (about 1/N) move.
 *
 * Bounded load: when the chosen endpoint is saturated, or its load score is
 * above (1 + ε) × the mean (and above {@link BALANCE_FLOOR}), the request
 * walks on in rendezvous order. Requests without a session key go to the
 * fallback policy.
 */
export class SessionAffinityPolicy implements RoutingPolicy {
  readonly name = 'session';
  readonly #epsilon: number;
  readonly #fallback: RoutingPolicy;
  /** Scratch for rendezvous weights, reused across decisions. */
  #weight = new Uint32Array(0);

  constructor(epsilon: number, fallback: RoutingPolicy) {
    this.#epsilon = epsilon;
    this.#fallback = fallback;
  }

  order<T extends EndpointLoad>(facts: RequestFacts, candidates: readonly T[], saturated: SaturationTest<T>): PolicyDecision<T> {
    if (facts.sessionKey === undefined) {
      return { ordered: this.#fallback.order(facts, candidates, saturated).ordered, outcome: 'no_key_fallback' };
    }
    const pool = eligible(candidates);
    const n = pool.length;
    const key = hashString(facts.sessionKey);
    const weight = (this.#weight = ensureUint32(this.#weight, n));
    let total = 0;
    for (let i = 0; i < n; i++) {
      const endpoint = pool[i] as T;
      weight[i] = mix32(key, endpoint.idHash);
      total += endpoint.loadScore;
    }
    const ranked = topKIndices(n, MAX_ORDERED, (i, j) =>
      weight[i] !== weight[j] ? (weight[i] as number) > (weight[j] as number) : (pool[i] as T).id < (pool[j] as T).id,
    ).map((i) => pool[i] as T);
    const limit = Math.max(BALANCE_FLOOR, (1 + this.#epsilon) * (total / Math.max(1, pool.length)));
    const first = ranked.findIndex((c) => !saturated(c) && c.loadScore <= limit);
    if (first === 0) return { ordered: ranked, outcome: 'affinity_hit' };
    if (first > 0) return { ordered: [...ranked.slice(first), ...ranked.slice(0, first)], outcome: 'affinity_spill' };
    // Every ranked endpoint is over the bound: keep rendezvous order, admission decides.
    return { ordered: ranked, outcome: 'affinity_spill' };
  }
}
