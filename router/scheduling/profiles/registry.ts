/**
 * The plugin registry: filters, scorers and affinity walks by the names profiles use,
 * each with its own parameter schema and factory (after the Gateway API
 * inference extension's endpoint picker, which keeps a factory per plugin
 * type name). Profiles are data that name plugins; this turns the names into
 * scorers and walks, and says what is wrong with a name or its parameters in
 * words a config error can carry: the profile, the plugin, the known names.
 *
 * The built-in plugins are registered in one list (plugins.ts); a test may
 * build its own registry with more.
 */
import type { z } from 'zod';
import type { ConfigIssue } from '../../config/load.ts';
import type { CandidateFilter, Picker } from '../pick.ts';
import type { AffinityDefaults, AffinityPlugin, FilterPlugin, ScorerPlugin } from '../plugin.ts';
import { BoundedWalkPicker } from '../pickers/bounded-walk.ts';
import type { WeightedScorer } from '../pickers/weighted-max.ts';

/** Parameters as configuration gives them, before the plugin's schema parses them. */
type RawParameters = Readonly<Record<string, unknown>> | undefined;

/** A scorer of a profile's weighted maximum, as configuration names it. */
export interface ScorerRef {
  readonly name: string;
  /** Weight (≥ 0) of the scorer's rating in the sum; 0 leaves it out. */
  readonly weight: number;
  readonly parameters?: RawParameters;
}

/** An affinity walk or a filter, as configuration names it: the name alone, or with parameters. */
export type AffinityRef = string | { readonly name: string; readonly parameters?: RawParameters };

/** A filter of a profile, as configuration names it (the same forms as {@link AffinityRef}). */
export type FilterRef = AffinityRef;

/** A ref as name and parameters, with where it and its name sit in the profile. */
interface Located {
  readonly name: string;
  readonly parameters: RawParameters;
  readonly at: readonly (string | number)[];
  readonly nameAt: readonly (string | number)[];
}

type Resolved<P> = { readonly plugin: P; readonly parameters: unknown } | { readonly issue: ConfigIssue };

export class PluginRegistry {
  readonly #filters = new Map<string, FilterPlugin>();
  readonly #scorers = new Map<string, ScorerPlugin>();
  readonly #affinities = new Map<string, AffinityPlugin>();

  /** Adds a filter; a name registered twice is a programming error (throws). */
  registerFilter(plugin: FilterPlugin): this {
    add(this.#filters, plugin, 'filter');
    return this;
  }

  /** Adds a scorer; a name registered twice is a programming error (throws). */
  registerScorer(plugin: ScorerPlugin): this {
    add(this.#scorers, plugin, 'scorer');
    return this;
  }

  /** Adds an affinity walk; a name registered twice is a programming error (throws). */
  registerAffinity(plugin: AffinityPlugin): this {
    add(this.#affinities, plugin, 'affinity walk');
    return this;
  }

  /** Registered filters, by name. */
  get filters(): FilterPlugin[] {
    return sortedByName(this.#filters);
  }

  /** Registered scorers, by name. */
  get scorers(): ScorerPlugin[] {
    return sortedByName(this.#scorers);
  }

  /** Registered affinity walks, by name. */
  get affinities(): AffinityPlugin[] {
    return sortedByName(this.#affinities);
  }

  /** What is wrong with a profile's filters, scorers and affinity walks (paths relative to the profile); empty when nothing is. */
  check(profile: string, scorers: readonly ScorerRef[], affinity: readonly AffinityRef[], filters: readonly FilterRef[] = []): ConfigIssue[] {
    const issues: ConfigIssue[] = [];
    filters.forEach((ref, i) => {
      const resolved = resolve(this.#filters, 'filter', profile, namedAt('filters', ref, i));
      if ('issue' in resolved) issues.push(resolved.issue);
    });
    scorers.forEach((ref, i) => {
      const resolved = resolve(this.#scorers, 'scorer', profile, scorerAt(ref, i));
      if ('issue' in resolved) issues.push(resolved.issue);
    });
    affinity.forEach((ref, i) => {
      const resolved = resolve(this.#affinities, 'affinity walk', profile, namedAt('affinity', ref, i));
      if ('issue' in resolved) issues.push(resolved.issue);
    });
    return issues;
  }

  /** True when one of the walks `refs` names reads the request's prompt-prefix facts (unknown names read nothing). */
  readsPromptPrefix(refs: readonly AffinityRef[]): boolean {
    return refs.some((ref) => this.#affinities.get(typeof ref === 'string' ? ref : ref.name)?.readsPromptPrefix === true);
  }

  /** The filters of `profile`, in order. @throws Error as {@link check} describes it. */
  filtersOf(profile: string, refs: readonly FilterRef[]): CandidateFilter[] {
    return refs.map((ref, i) => {
      const { plugin, parameters } = resolved(resolve(this.#filters, 'filter', profile, namedAt('filters', ref, i)));
      return plugin.create(parameters);
    });
  }

  /** The weighted maximum's scorers of `profile`. @throws Error as {@link check} describes it. */
  weightedScorers(profile: string, refs: readonly ScorerRef[]): WeightedScorer[] {
    return refs.map((ref, i) => {
      const { plugin, parameters } = resolved(resolve(this.#scorers, 'scorer', profile, scorerAt(ref, i)));
      return { scorer: plugin.create(parameters), weight: ref.weight };
    });
  }

  /** The affinity walks of `profile`, in order. @throws Error as {@link check} describes it. */
  walks(profile: string, refs: readonly AffinityRef[], defaults: AffinityDefaults): Picker[] {
    return refs.map((ref, i) => {
      const { plugin, parameters } = resolved(resolve(this.#affinities, 'affinity walk', profile, namedAt('affinity', ref, i)));
      const { scorer, bound } = plugin.create(parameters, defaults);
      return new BoundedWalkPicker(scorer, bound);
    });
  }
}

function sortedByName<P extends { readonly name: string }>(plugins: ReadonlyMap<string, P>): P[] {
  return [...plugins.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

function add<P extends { readonly name: string }>(plugins: Map<string, P>, plugin: P, kind: string): void {
  if (plugins.has(plugin.name)) throw new Error(`${kind} ${plugin.name} is registered twice`);
  plugins.set(plugin.name, plugin);
}

function scorerAt(ref: ScorerRef, i: number): Located {
  return { name: ref.name, parameters: ref.parameters, at: ['scorers', i], nameAt: ['scorers', i, 'name'] };
}

/** An entry of the profile's `list` (`affinity` or `filters`), given by name or as {name, parameters}. */
function namedAt(list: 'affinity' | 'filters', ref: AffinityRef, i: number): Located {
  return typeof ref === 'string'
    ? { name: ref, parameters: undefined, at: [list, i], nameAt: [list, i] }
    : { name: ref.name, parameters: ref.parameters, at: [list, i], nameAt: [list, i, 'name'] };
}

/** The plugin `ref` names with its parameters parsed, or the issue that says why not. */
function resolve<P extends { readonly parameters: z.ZodType }>(plugins: ReadonlyMap<string, P>, kind: string, profile: string, ref: Located): Resolved<P> {
  const { name, parameters: raw, at, nameAt } = ref;
  const plugin = plugins.get(name);
  if (plugin === undefined) {
    const known = [...plugins.keys()].sort().join(', ');
    return { issue: { path: [...nameAt], message: `profile ${profile}: unknown ${kind} ${name}; known: ${known}` } };
  }
  const parsed = plugin.parameters.safeParse(raw ?? {});
  if (parsed.success) return { plugin, parameters: parsed.data };
  const details = parsed.error.issues.map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`)).join(', ');
  return { issue: { path: [...at, 'parameters'], message: `profile ${profile}: ${kind} ${name}: bad parameters (${details})` } };
}

function resolved<P>(result: Resolved<P>): { readonly plugin: P; readonly parameters: unknown } {
  if ('issue' in result) throw new Error(result.issue.message);
  return result;
}
