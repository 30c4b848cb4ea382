import type { EndpointLoad, PolicyDecision, RequestFacts, RoutingPolicy, SaturationTest } from './policy.ts';
import { MAX_ORDERED } from './policy.ts';
import { eligible } from './select.ts';

/**
 * Each model's candidates in turn, ignoring load: the baseline the other
 * policies are measured against. Its only state is a cursor per model.
 */
export class RoundRobinPolicy implements RoutingPolicy {
  readonly name = 'round-robin';
  readonly #cursors = new Map<string, number>();

  order<T extends EndpointLoad>(facts: RequestFacts, candidates: readonly T[], _saturated?: SaturationTest<T>): PolicyDecision<T> {
    const pool = eligible(candidates);
    const cursor = this.#cursors.get(facts.model) ?? 0;
    this.#cursors.set(facts.model, (cursor + 1) % 0x7fffffff);
    const ordered: T[] = [];
    for (let i = 0; i < Math.min(MAX_ORDERED, pool.length); i++) ordered.push(pool[(cursor + i) % pool.length] as T);
    return { ordered, outcome: 'round_robin' };
  }
}
