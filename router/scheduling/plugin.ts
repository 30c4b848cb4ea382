/**
 * The contracts of scheduling plugins as configuration names them, in the
 * endpoint picker's vocabulary: a typed name, a schema for its own
 * parameters, and a factory. Profiles are data (`routing.profiles`) that name
 * plugins; profiles/registry.ts turns the names into scorers and walks, and
 * checks them at config load, so a bad name or parameter is a config error
 * rather than a start-up crash.
 */
import type { z } from 'zod';
import type { LoadBound } from './load-bound.ts';
import type { CandidateFilter, OrderingScorer, RatingScorer } from './pick.ts';

/**
 * What every plugin shows configuration and its reference: the name a
 * profile uses, one sentence of what it does, and its parameters (each
 * field's `.describe()` text is its line in the reference). `create` is
 * called once per profile that names the plugin, with its parameters already
 * parsed; what it returns is owned by that profile.
 */
export interface DescribedPlugin<P = unknown> {
  /** Lowercase words joined by dashes. */
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodType<P>;
}

/** A rating scorer for the weighted maximum (`scorers: [{name, weight}]`). */
export interface ScorerPlugin<P = unknown> extends DescribedPlugin<P> {
  create(parameters: P): RatingScorer;
}

/** A filter of a profile (`filters: [name]`). */
export interface FilterPlugin<P = unknown> extends DescribedPlugin<P> {
  create(parameters: P): CandidateFilter;
}

/** Routing-wide settings an affinity walk's parameters default to (`routing.balanceEpsilon`, `routing.prefix`). */
export interface AffinityDefaults {
  readonly balanceEpsilon: number;
  readonly prefix: { readonly epsilon: number; readonly kappa: number; readonly spread: number; readonly minReuse: number };
}

/**
 * An affinity walk: a deterministic order of candidates and the load bound
 * under which the walk takes one (see load-bound.ts). The registry wraps the
 * two in the bounded walk picker; parameters a profile leaves out default to
 * the routing-wide settings.
 */
export interface AffinityPlugin<P = unknown> extends DescribedPlugin<P> {
  /** The walk reads the request's prompt-prefix facts (`RequestFacts.prefix`), which cost a hash of the prompt per request: only profiles with such a walk pay it. */
  readonly readsPromptPrefix?: boolean;
  create(parameters: P, defaults: AffinityDefaults): { readonly scorer: OrderingScorer; readonly bound: LoadBound };
}
