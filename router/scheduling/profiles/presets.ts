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
import type { ConfigCheck, ConfigIssue } from '../../config/load.ts';
import type { POLICY_NAMES } from '../../config/schema.ts';
import type { Random } from '../candidate.ts';
import type { Picker } from '../pick.ts';
import { RoundRobinPicker } from '../pickers/round-robin.ts';
import { WeightedMaxPicker } from '../pickers/weighted-max.ts';
import { builtInPlugins } from './plugins.ts';
import { SchedulingProfile } from './profile.ts';
import type { AffinityRef, FilterRef, PluginRegistry, ScorerRef } from './registry.ts';

/** One profile's settings (`routing.profiles.<name>`): plugins named as data. */
export interface ProfileSettings {
  /** The profile's own filters, run after the built-in ones (none when absent). */
  readonly filters?: readonly FilterRef[] | undefined;
  /** Affinity walks tried in order before the final picker. */
  readonly affinity: readonly AffinityRef[];
  readonly picker: 'weighted-max' | 'round-robin';
  /** The weighted maximum's scorers. Give this or `weights`, not both; neither means least-load's. */
  readonly scorers?: readonly ScorerRef[] | undefined;
  /** The older form of `scorers`: the weights of `load-score` and `kv-usage`. */
  readonly weights?: { readonly load: number; readonly kvUsage: number } | undefined;
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

/** Least-load's scorers: load first, free KV cache only to break near-ties. */
const LEAST_LOAD: readonly ScorerRef[] = [
  { name: 'load-score', weight: 1 },
  { name: 'kv-usage', weight: 0.001 },
];

/** The prefix-affinity chain, which the default `auto` is too: one object, so the two cannot drift apart. */
const PREFIX_AFFINITY: Omit<ProfileSettings, 'powerOfTwoChoices'> = { affinity: ['lora', 'session', 'prefix'], picker: 'weighted-max', scorers: LEAST_LOAD };

/**
 * The preset profiles, by the policy names configs have always used, in the
 * same data form as `routing.profiles`; `routing.powerOfTwoChoices`
 * completes them. Keyed by the config schema's POLICY_NAMES (which the
 * schema checks `routing.policy` against), so the two lists cannot differ.
 */
export const PRESETS: Readonly<Record<(typeof POLICY_NAMES)[number], Omit<ProfileSettings, 'powerOfTwoChoices'>>> = {
  'least-load': { affinity: [], picker: 'weighted-max', scorers: LEAST_LOAD },
  // `auto` and `prefix-affinity` behave the same: a keyless request follows its prompt's prefix,
  // since every OpenAI SDK sends keyless chat and engines cache prefixes by default; `session`
  // (the default before prefix affinity) sends a keyless request by least load. Each affinity
  // preset sends a request for a LoRA adapter to the engines that run it first (a walk that applies
  // only to adapter requests), session key or not: an engine without the adapter must swap it in,
  // which costs more than the conversation's cache, and the adapter's engines stay the same from
  // one turn to the next while under the load bound.
  session: { affinity: ['lora', 'session'], picker: 'weighted-max', scorers: LEAST_LOAD },
  auto: PREFIX_AFFINITY,
  'round-robin': { affinity: [], picker: 'round-robin', scorers: LEAST_LOAD },
  'prefix-affinity': PREFIX_AFFINITY,
};

/**
 * A profile's weighted-maximum scorers: `scorers`, or the older `weights`
 * form mapped to the same two scorers, or least-load's.
 * @throws Error when the profile gives both forms.
 */
export function scorerRefsOf(name: string, profile: ProfileSettings): readonly ScorerRef[] {
  if (profile.scorers !== undefined && profile.weights !== undefined) throw new Error(`profile ${name}: give scorers or weights, not both`);
  if (profile.scorers !== undefined) return profile.scorers;
  if (profile.weights === undefined) return LEAST_LOAD;
  return [
    { name: 'load-score', weight: profile.weights.load },
    { name: 'kv-usage', weight: profile.weights.kvUsage },
  ];
}

/** The config check of `routing.profiles` against `plugins`: unknown names and bad parameters, named by profile and plugin. */
export function profilesCheck(plugins: PluginRegistry = builtInPlugins()): ConfigCheck {
  return (config) =>
    Object.entries(config.routing.profiles).flatMap(([name, profile]): ConfigIssue[] => {
      const at = ['routing', 'profiles', name];
      // Both forms at once is the schema's error; this check runs only on a config that passed it.
      return plugins.check(name, scorerRefsOf(name, profile), profile.affinity, profile.filters).map((issue) => ({ path: [...at, ...issue.path], message: issue.message }));
    });
}

/** Every profile, and which one schedules each model. */
export class ProfileRegistry {
  readonly #byName = new Map<string, SchedulingProfile>();
  readonly #usesPrefix = new Set<string>();
  readonly #byModel: ReadonlyMap<string, string>;
  readonly #fallback: SchedulingProfile;

  /** @throws Error when a profile names an unknown plugin or gives bad parameters (config load checks this first, see {@link profilesCheck}). */
  constructor(settings: SchedulingSettings, random: Random, plugins: PluginRegistry = builtInPlugins()) {
    const presets = Object.entries(PRESETS).map(([name, preset]) => [name, { ...preset, powerOfTwoChoices: settings.powerOfTwoChoices }] as const);
    for (const [name, profile] of [...presets, ...Object.entries(settings.profiles)]) {
      this.#byName.set(name, new SchedulingProfile(name, pickersOf(name, profile, settings, random, plugins), plugins.filtersOf(name, profile.filters ?? [])));
      if (plugins.readsPromptPrefix(profile.affinity)) this.#usesPrefix.add(name);
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

function pickersOf(name: string, profile: ProfileSettings, settings: SchedulingSettings, random: Random, plugins: PluginRegistry): Picker[] {
  const walks = plugins.walks(name, profile.affinity, settings);
  const scorers = plugins.weightedScorers(name, scorerRefsOf(name, profile));
  const final = profile.picker === 'round-robin' ? new RoundRobinPicker() : new WeightedMaxPicker(scorers, random, { sampleTwo: profile.powerOfTwoChoices });
  return [...walks, final];
}
