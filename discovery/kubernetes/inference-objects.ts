/**
 * The Gateway API Inference Extension's request-level objects
 * (inference.networking.x-k8s.io/v1alpha2, v1.3.0), read for the pools
 * switchyard watches:
 * - `InferenceObjective`: a name requests select (by header) and an integer
 *   priority against one pool;
 * - `InferenceModelRewrite`: rules that match a requested model name (or any,
 *   for a rule without matches) and rewrite it to weighted targets.
 *
 * As for pools, every field read is checked: an object of the wrong shape is
 * reported with why and left out, never a crash.
 */

import { field } from './inference-pool.ts';

/** Where the objects live. */
export const OBJECTIVE_API = { group: 'inference.networking.x-k8s.io', version: 'v1alpha2', resource: 'inferenceobjectives' } as const;
export const REWRITE_API = { group: 'inference.networking.x-k8s.io', version: 'v1alpha2', resource: 'inferencemodelrewrites' } as const;

/** An InferenceObjective of a watched pool. */
export interface Objective {
  readonly namespace: string;
  readonly name: string;
  /** The pool it references (same namespace). */
  readonly pool: string;
  /** Its priority; undefined: unset (normal). */
  readonly priority: number | undefined;
  /** `metadata.creationTimestamp` in epoch ms (0 when absent): the older wins a name clash. */
  readonly createdAt: number;
}

/** One target of a rewrite rule. */
export interface RewriteTarget {
  /** The model name the request is sent with. */
  readonly model: string;
  /** Relative weight (1-1,000,000); undefined when the rule gives none (then all its targets share evenly). */
  readonly weight: number | undefined;
}

/** One rule: the model names it matches exactly (none: every model, a generic rule) and its targets. */
export interface RewriteRule {
  readonly matches: readonly string[];
  readonly targets: readonly RewriteTarget[];
}

/** A set of rewrite rules: an InferenceModelRewrite of a watched pool, or one from the config file. */
export interface RewriteRules {
  /** `namespace/name` of the object, or `config/<name>` for the config file's. */
  readonly id: string;
  /** `metadata.creationTimestamp` in epoch ms: among equal matches the oldest set wins (the config file's count as oldest). */
  readonly createdAt: number;
  readonly rules: readonly RewriteRule[];
}

/** An object read, or why it is left out. */
export type Reading<T> = { readonly value: T } | { readonly problem: string };

/** The pool an object references, when it references an InferencePool by name. */
export function poolRefName(object: unknown): Reading<string> {
  const ref = field(field(object, 'spec'), 'poolRef');
  const name = field(ref, 'name');
  if (typeof name !== 'string' || name === '') return { problem: 'spec.poolRef.name is missing' };
  const group = field(ref, 'group') ?? 'inference.networking.k8s.io';
  const kind = field(ref, 'kind') ?? 'InferencePool';
  if (group !== 'inference.networking.k8s.io' || kind !== 'InferencePool') return { problem: `spec.poolRef names ${JSON.stringify(kind)} of group ${JSON.stringify(group)}, not an InferencePool (inference.networking.k8s.io)` };
  return { value: name };
}

/** Reads an InferenceObjective (its pool reference already checked). */
export function readObjective(object: unknown, pool: string): Reading<Objective> {
  const meta = metadataOf(object);
  if (meta === undefined) return { problem: 'the object has no name' };
  const priority = field(field(object, 'spec'), 'priority');
  if (priority !== undefined && priority !== null && (typeof priority !== 'number' || !Number.isSafeInteger(priority))) return { problem: 'spec.priority is not an integer' };
  return { value: { ...meta, pool, priority: typeof priority === 'number' ? priority : undefined } };
}

/** Most rules, matches and targets read from one object (the API sets no bound; these keep one object from costing much per request). */
const MAX_RULES = 64;
const MAX_ENTRIES = 64;

/** Reads an InferenceModelRewrite into {@link RewriteRules}. */
export function readRewrite(object: unknown): Reading<RewriteRules> {
  const meta = metadataOf(object);
  if (meta === undefined) return { problem: 'the object has no name' };
  const read = readRewriteRules(field(field(object, 'spec'), 'rules'));
  if ('problem' in read) return read;
  return { value: { id: `${meta.namespace}/${meta.name}`, createdAt: meta.createdAt, rules: read.value } };
}

/** Reads `spec.rules` (the config file's rules have the same shape). */
export function readRewriteRules(raw: unknown): Reading<RewriteRule[]> {
  if (!Array.isArray(raw) || raw.length === 0) return { problem: 'spec.rules is empty' };
  if (raw.length > MAX_RULES) return { problem: `spec.rules has ${raw.length} rules; at most ${MAX_RULES} are read` };
  const rules: RewriteRule[] = [];
  for (const [i, rule] of raw.entries()) {
    const matches = field(rule, 'matches') ?? [];
    const targets = field(rule, 'targets');
    if (!Array.isArray(matches) || matches.length > MAX_ENTRIES) return { problem: `rules[${i}].matches is not a list of at most ${MAX_ENTRIES}` };
    if (!Array.isArray(targets) || targets.length === 0 || targets.length > MAX_ENTRIES) return { problem: `rules[${i}].targets needs 1 to ${MAX_ENTRIES} targets` };
    const models: string[] = [];
    for (const match of matches) {
      const model = field(match, 'model');
      const type = field(model, 'type') ?? 'Exact';
      const value = field(model, 'value');
      if (type !== 'Exact' || typeof value !== 'string' || value === '') return { problem: `rules[${i}].matches: each match needs model.value, of type Exact` };
      models.push(value);
    }
    const read: RewriteTarget[] = [];
    for (const target of targets) {
      const model = field(target, 'modelRewrite');
      const weight = field(target, 'weight');
      if (typeof model !== 'string' || model === '') return { problem: `rules[${i}].targets: each target needs modelRewrite` };
      if (weight !== undefined && (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > 1_000_000)) return { problem: `rules[${i}].targets: weight must be an integer from 1 to 1000000` };
      read.push({ model, weight });
    }
    rules.push({ matches: models, targets: read });
  }
  return { value: rules };
}

function metadataOf(object: unknown): { namespace: string; name: string; createdAt: number } | undefined {
  const meta = field(object, 'metadata');
  const name = field(meta, 'name');
  if (typeof name !== 'string') return undefined;
  const namespace = field(meta, 'namespace');
  const timestamp = field(meta, 'creationTimestamp');
  const created = typeof timestamp === 'string' ? Date.parse(timestamp) : NaN;
  return { namespace: typeof namespace === 'string' ? namespace : '', name, createdAt: Number.isFinite(created) ? created : 0 };
}

/**
 * Order of precedence among objects of one kind: the oldest first
 * (`creationTimestamp` has whole seconds), then by `id` (`namespace/name`),
 * so that replicas agree on a tie.
 */
export function oldestFirst<T extends { readonly createdAt: number }>(id: (object: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
    const x = id(a);
    const y = id(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}
