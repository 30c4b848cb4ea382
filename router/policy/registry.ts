/**
 * Builds the configured policies and picks the one for each model.
 */
import type { Random, RoutingPolicy } from './policy.ts';
import { LeastLoadPolicy } from './least-load.ts';
import { RoundRobinPolicy } from './round-robin.ts';
import { SessionAffinityPolicy } from './session-affinity.ts';

/** Policy names accepted in configuration. `auto` is session affinity with a least-load fallback. */
export type PolicyName = 'auto' | 'least-load' | 'session' | 'round-robin';

/** Policy settings from configuration. */
export interface PolicySettings {
  readonly policy: PolicyName;
  readonly modelPolicies: Readonly<Record<string, PolicyName>>;
  readonly balanceEpsilon: number;
  readonly powerOfTwoChoices: boolean;
}

/**
 * Resolves the policy for a model. Model names come from requests, so they
 * are looked up in a Map: indexing the configured object with a name like
 * `constructor` or `toString` found Object.prototype's function and failed
 * the request with a 500.
 */
export class PolicyRegistry {
  readonly #byName: ReadonlyMap<PolicyName, RoutingPolicy>;
  readonly #byModel: ReadonlyMap<string, PolicyName>;
  readonly #fallback: PolicyName;

  constructor(settings: PolicySettings, random: Random) {
    const leastLoad = new LeastLoadPolicy(random, settings.powerOfTwoChoices);
    // `session` and `auto` behave the same: requests without a key fall back to least-load.
    const session = new SessionAffinityPolicy(settings.balanceEpsilon, leastLoad);
    this.#byName = new Map<PolicyName, RoutingPolicy>([
      ['auto', session],
      ['session', session],
      ['least-load', leastLoad],
      ['round-robin', new RoundRobinPolicy()],
    ]);
    this.#byModel = new Map(Object.entries(settings.modelPolicies));
    this.#fallback = settings.policy;
  }

  /** The policy for `model` (any string): its entry in `modelPolicies`, else `policy`. */
  forModel(model: string): RoutingPolicy {
    return this.#byName.get(this.#byModel.get(model) ?? this.#fallback) as RoutingPolicy;
  }
}
