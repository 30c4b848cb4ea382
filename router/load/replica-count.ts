/**
 * How many router replicas share the engines, for what no shared state
 * shares: the safe start's share of what an engine is seen running, the
 * load formulas' replicas this one cannot see, degraded quotas.
 *
 * Two sources, the counted one first: the EndpointSlices of the router's own
 * Service (discovery/kubernetes/replica-watch.ts), which follow every rollout
 * and scale step, then `load.replicas` (with an HPA, its maxReplicas), which
 * holds until the first count. While the API cannot be reached the last
 * count stands, as the watch keeps its last good copy. The count errs on the
 * side of more replicas (pods that are starting count), so a replica admits
 * less, never more, than its share.
 */

/** Where the count came from. */
export type ReplicaCountSource = 'service' | 'config' | 'unknown';

/** What the readers of the count need: the count now, undefined while unknown. */
export interface ReplicaCountReader {
  readonly value: number | undefined;
}

/** The replica count one router holds (one instance per process, shared by its readers). */
export class ReplicaCount implements ReplicaCountReader {
  readonly #configured: number | undefined;
  #counted: number | undefined;

  /** `configured`: `load.replicas`, if set. */
  constructor(configured?: number) {
    this.#configured = configured;
  }

  /** Replicas now (≥ 1), or undefined when neither counted nor configured. */
  get value(): number | undefined {
    return this.#counted ?? this.#configured;
  }

  get source(): ReplicaCountSource {
    return this.#counted !== undefined ? 'service' : this.#configured !== undefined ? 'config' : 'unknown';
  }

  /** The Service's EndpointSlices list `replicas` pods that are not terminating; this one counts even before it is listed. */
  counted(replicas: number): void {
    this.#counted = Math.max(1, replicas);
  }
}
