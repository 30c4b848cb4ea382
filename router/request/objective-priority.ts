/**
 * InferenceObjective priorities: a request that names an objective (by the
 * `x-gateway-inference-objective` header, from a trusted proxy) runs at the
 * priority class the objective's integer priority maps to: above
 * `highPriorityAbove` high, below `lowPriorityBelow` low, else (and unset)
 * normal. The class decides admission order and shedding order, as the
 * priority header's does.
 *
 * Objectives belong to pools, and the pool of a request is known only once
 * its body is read, while priority is decided before; so names are looked
 * up across every watched pool. When two pools' objectives share a name, the
 * older object wins, as the API resolves its own conflicts.
 */
import { oldestFirst, type Objective } from '../../discovery/kubernetes/inference-objects.ts';
import { firstHeaderValue } from '../header-value.ts';
import type { Priority } from '../scheduling/priority.ts';

/** Where objective priorities split into classes. */
export interface ObjectiveThresholds {
  readonly highPriorityAbove: number;
  readonly lowPriorityBelow: number;
}

/** The objectives in force; swap them with {@link ObjectivePriorities.set}. */
export class ObjectivePriorities {
  #classes = new Map<string, Priority>();
  readonly #thresholds: ObjectiveThresholds;
  readonly #unknown: () => void;

  /** `unknown` is called for every request naming an objective that does not exist (for a metric); it must not throw. */
  constructor(thresholds: ObjectiveThresholds, unknown: () => void = () => undefined) {
    this.#thresholds = thresholds;
    this.#unknown = unknown;
  }

  /** Replaces the objectives. */
  set(objectives: readonly Objective[]): void {
    const ordered = [...objectives].sort(oldestFirst((objective) => `${objective.namespace}/${objective.name}`));
    const classes = new Map<string, Priority>();
    for (const objective of ordered) if (!classes.has(objective.name)) classes.set(objective.name, this.classOf(objective.priority));
    this.#classes = classes;
  }

  /** The objectives by name and class (for `/debug/endpoints`). */
  get classes(): ReadonlyMap<string, Priority> {
    return this.#classes;
  }

  /** The class of a priority value (undefined: unset). */
  classOf(priority: number | undefined): Priority {
    if (priority === undefined) return 'normal';
    if (priority > this.#thresholds.highPriorityAbove) return 'high';
    if (priority < this.#thresholds.lowPriorityBelow) return 'low';
    return 'normal';
  }

  /** The class the header value names: undefined without the header; normal (and counted) for an unknown objective. */
  priorityOf(header: string | string[] | undefined): Priority | undefined {
    const name = firstHeaderValue(header)?.trim();
    if (name === undefined || name === '') return undefined;
    const known = this.#classes.get(name);
    if (known !== undefined) return known;
    this.#unknown();
    return 'normal';
  }
}
