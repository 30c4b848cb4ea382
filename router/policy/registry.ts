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

/** Resolves the policy for a model. */
export class PolicyRegistry {
  readonly #byName: ReadonlyMap<PolicyName, RoutingPolicy>;
  readonly #settings: PolicySettings;

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
    this.#settings = settings;
  }

  /** The policy for `model`. */
  forModel(model: string): RoutingPolicy {
    const name = this.#settings.modelPolicies[model] ?? this.#settings.policy;
    return this.#byName.get(name) as RoutingPolicy;
  }
}
