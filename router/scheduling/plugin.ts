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
 * A rating scorer for the weighted maximum. `create` is called once per
 * profile that names the scorer, with its parameters already parsed by
 * `parameters`; the scorer it returns is owned by that profile.
 */
export interface ScorerPlugin<P = unknown> {
  /** The name configs use (`scorers: [{name}]`): lowercase words joined by dashes. */
  readonly name: string;
  /** One sentence for the configuration reference: what the scorer rates. */
  readonly description: string;
  /** Its parameters; each field's `.describe()` text is its line in the reference. */
  readonly parameters: z.ZodType<P>;
  create(parameters: P): RatingScorer;
}

/** A filter of a profile (`filters: [name]`); `create` is called once per profile that names it, with its parameters parsed. */
export interface FilterPlugin<P = unknown> {
  /** The name configs use (`filters: [name]`): lowercase words joined by dashes. */
  readonly name: string;
  /** One sentence for the configuration reference: which candidates the filter keeps. */
  readonly description: string;
  /** Its parameters; each field's `.describe()` text is its line in the reference. */
  readonly parameters: z.ZodType<P>;
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
export interface AffinityPlugin<P = unknown> {
  /** The name configs use (`affinity: [name]`). */
  readonly name: string;
  /** One sentence for the configuration reference: which requests the walk applies to and where it sends them. */
  readonly description: string;
  /** The walk reads the request's prompt-prefix facts (`RequestFacts.prefix`), which cost a hash of the prompt per request: only profiles with such a walk pay it. */
  readonly readsPromptPrefix?: boolean;
  /** Its parameters; each field's `.describe()` text is its line in the reference. */
  readonly parameters: z.ZodType<P>;
  create(parameters: P, defaults: AffinityDefaults): { readonly scorer: OrderingScorer; readonly bound: LoadBound };
}
