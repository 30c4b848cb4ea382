import type { EndpointLoad, PolicyDecision, RequestFacts, RoutingPolicy, SaturationTest } from './policy.ts';
import { MAX_ORDERED } from './policy.ts';
import { hashString, mix32 } from '../load/hash.ts';
import { eligible, topK } from './select.ts';

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

  constructor(epsilon: number, fallback: RoutingPolicy) {
    this.#epsilon = epsilon;
    this.#fallback = fallback;
  }

  order<T extends EndpointLoad>(facts: RequestFacts, candidates: readonly T[], saturated: SaturationTest<T>): PolicyDecision<T> {
    if (facts.sessionKey === undefined) {
      return { ordered: this.#fallback.order(facts, candidates, saturated).ordered, outcome: 'no_key_fallback' };
    }
    const pool = eligible(candidates);
    const key = hashString(facts.sessionKey);
    const ranked = topK(pool, MAX_ORDERED, (a, b) => {
      const wa = mix32(key, a.idHash);
      const wb = mix32(key, b.idHash);
      return wa !== wb ? wa > wb : a.id < b.id;
    });
    let total = 0;
    for (const c of pool) total += c.loadScore;
    const limit = Math.max(BALANCE_FLOOR, (1 + this.#epsilon) * (total / Math.max(1, pool.length)));
    const first = ranked.findIndex((c) => !saturated(c) && c.loadScore <= limit);
    if (first === 0) return { ordered: ranked, outcome: 'affinity_hit' };
    if (first > 0) return { ordered: [...ranked.slice(first), ...ranked.slice(0, first)], outcome: 'affinity_spill' };
    // Every ranked endpoint is over the bound: keep rendezvous order, admission decides.
    return { ordered: ranked, outcome: 'affinity_spill' };
  }
}
