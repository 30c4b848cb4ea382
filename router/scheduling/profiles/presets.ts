/**
 * Builds the scheduling profiles from configuration: the presets that carry
 * today's policy names, and the named profiles of `routing.profiles`. Model
 * names come from requests, so they are looked up in a Map: indexing a plain
 * object with a name like `constructor` finds Object.prototype's function.
 *
 * profiles/ is where the plugins (filters/, scorers/, pickers/) are put
 * together; the core files beside it only declare the contracts the plugins
 * implement and never import a plugin (lint), so a plugin can be added or
 * replaced without touching them.
 */
import type { Random } from '../candidate.ts';
import { BALANCE_FLOOR, type LoadBound } from '../load-bound.ts';
import type { Picker } from '../pick.ts';
import { BoundedWalkPicker } from '../pickers/bounded-walk.ts';
import { RoundRobinPicker } from '../pickers/round-robin.ts';
import { WeightedMaxPicker } from '../pickers/weighted-max.ts';
import { SchedulingProfile } from './profile.ts';
import { kvUsageScorer } from '../scorers/kv-usage.ts';
import { loadScoreScorer } from '../scorers/load-score.ts';
import { PrefixAffinityScorer } from '../scorers/prefix-affinity.ts';
import { SessionRendezvousScorer } from '../scorers/session-rendezvous.ts';

/** One profile's settings (`routing.profiles.<name>`). */
export interface ProfileSettings {
  readonly affinity: readonly ('session' | 'prefix')[];
  readonly picker: 'weighted-max' | 'round-robin';
  readonly weights: { readonly load: number; readonly kvUsage: number };
  readonly powerOfTwoChoices: boolean;
}

/** Prefix-affinity settings (`routing.prefix`). */
export interface PrefixSettings {
  readonly epsilon: number;
  readonly kappa: number;
  readonly spread: number;
  readonly minReuse: number;
}

/** Routing settings from configuration. */
export interface SchedulingSettings {
  /** The default profile: a preset or a name from `profiles`. */
  readonly policy: string;
  readonly modelPolicies: Readonly<Record<string, string>>;
  readonly profiles: Readonly<Record<string, ProfileSettings>>;
  readonly balanceEpsilon: number;
  readonly powerOfTwoChoices: boolean;
  readonly prefix: PrefixSettings;
}

/** Least-load's weights: load first, free KV cache only to break near-ties. */
const LEAST_LOAD_WEIGHTS = { load: 1, kvUsage: 0.001 };

/** The preset profiles, by the policy names configs have always used. */
function presets(settings: SchedulingSettings): Record<string, ProfileSettings> {
  const base = { picker: 'weighted-max', weights: LEAST_LOAD_WEIGHTS, powerOfTwoChoices: settings.powerOfTwoChoices } as const;
  return {
    'least-load': { ...base, affinity: [] },
    // `session` and `auto` behave the same: requests without a key go by least load.
    session: { ...base, affinity: ['session'] },
    auto: { ...base, affinity: ['session'] },
    'round-robin': { ...base, affinity: [], picker: 'round-robin' },
    'prefix-affinity': { ...base, affinity: ['session', 'prefix'] },
  };
}

/** Every profile, and which one schedules each model. */
export class ProfileRegistry {
  readonly #byName = new Map<string, SchedulingProfile>();
  readonly #usesPrefix = new Set<string>();
  readonly #byModel: ReadonlyMap<string, string>;
  readonly #fallback: SchedulingProfile;

  constructor(settings: SchedulingSettings, random: Random) {
    const all = { ...presets(settings), ...settings.profiles };
    for (const [name, profile] of Object.entries(all)) {
      this.#byName.set(name, new SchedulingProfile(name, pickersOf(profile, settings, random)));
      if (profile.affinity.includes('prefix')) this.#usesPrefix.add(name);
    }
    this.#byModel = new Map(Object.entries(settings.modelPolicies));
    const fallback = this.#byName.get(settings.policy);
    if (fallback === undefined) throw new Error(`unknown scheduling profile ${settings.policy}`);
    this.#fallback = fallback;
  }

  /** The profile for `model` (any string): its entry in `modelPolicies`, else the default. */
  forModel(model: string): SchedulingProfile {
    const name = this.#byModel.get(model);
    return (name === undefined ? undefined : this.#byName.get(name)) ?? this.#fallback;
  }

  /** True when the profile scheduling `model` uses prefix affinity (so the request's prompt prefix is worth hashing). */
  usesPrefix(model: string): boolean {
    return this.#usesPrefix.has(this.forModel(model).name);
  }

  /** True when any profile uses prefix affinity. */
  get anyUsesPrefix(): boolean {
    return this.#usesPrefix.size > 0;
  }
}

function pickersOf(profile: ProfileSettings, settings: SchedulingSettings, random: Random): Picker[] {
  const sessionBound: LoadBound = { epsilon: settings.balanceEpsilon, kappa: 0, floor: BALANCE_FLOOR };
  const prefixBound: LoadBound = { epsilon: settings.prefix.epsilon, kappa: settings.prefix.kappa, floor: BALANCE_FLOOR, creditFloorOnly: true };
  const walks = profile.affinity.map((kind) =>
    kind === 'session'
      ? new BoundedWalkPicker(new SessionRendezvousScorer(), sessionBound)
      : new BoundedWalkPicker(new PrefixAffinityScorer({ spread: settings.prefix.spread, minReuse: settings.prefix.minReuse, fullCreditTokens: 8_192 }), prefixBound),
  );
  const final =
    profile.picker === 'round-robin'
      ? new RoundRobinPicker()
      : new WeightedMaxPicker(
          [
            { scorer: loadScoreScorer, weight: profile.weights.load },
            { scorer: kvUsageScorer, weight: profile.weights.kvUsage },
          ],
          random,
          { sampleTwo: profile.powerOfTwoChoices },
        );
  return [...walks, final];
}
