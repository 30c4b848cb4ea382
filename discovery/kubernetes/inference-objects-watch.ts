/**
 * Watches the InferenceObjectives and InferenceModelRewrites of the pools
 * switchyard discovers: one list+watch per kind and namespace (the same loop,
 * re-list on every failure, as for pods), keeping the objects whose
 * `poolRef` names a watched pool. Every change gives the router a new
 * snapshot of both kinds.
 *
 * When a kind's CRD is not installed the API answers 404 and the loop keeps
 * retrying at its backoff: the feature is off until the CRD appears, and the
 * status says so. Objects of the wrong shape are listed in the status with
 * why, and left out.
 */
import type { ListWatchApi } from './kube-api.ts';
import { OBJECTIVE_API, poolRefName, readObjective, readRewrite, REWRITE_API, type Objective, type Reading, type RewriteRules } from './inference-objects.ts';
import type { KubernetesSourceObserver } from './kubernetes-source.ts';
import { ListWatcher, REAL_ENVIRONMENT, type Environment, type ListWatchStatus, type ListWatchTiming } from './list-watcher.ts';

/** What the router uses: every objective and rewrite of the watched pools. */
export interface InferenceObjects {
  readonly objectives: readonly Objective[];
  readonly rewrites: readonly RewriteRules[];
}

/** `/debug/endpoints` view of one watch. */
export interface InferenceObjectsWatchStatus extends ListWatchStatus {
  readonly namespace: string;
  readonly kind: 'InferenceObjective' | 'InferenceModelRewrite';
  /** Objects of the watched pools in use. */
  readonly used: number;
  /** Objects of the watched pools left out, with why. */
  readonly skipped: readonly { readonly id: string; readonly reason: string }[];
}

type Kind = InferenceObjectsWatchStatus['kind'];

interface KindWatch {
  readonly namespace: string;
  readonly kind: Kind;
  readonly watcher: ListWatcher;
  objectives: Objective[];
  rewrites: RewriteRules[];
  skipped: { id: string; reason: string }[];
}

/** The objectives and rewrites of a set of pools. */
export class InferenceObjectsWatch {
  readonly #watches: KindWatch[] = [];
  #onChange: (objects: InferenceObjects) => void = () => undefined;

  /** @param pools namespace → names of the pools watched there. */
  constructor(api: ListWatchApi, pools: ReadonlyMap<string, ReadonlySet<string>>, timing: ListWatchTiming, observer: KubernetesSourceObserver = {}, env: Environment = REAL_ENVIRONMENT) {
    for (const [namespace, names] of pools) {
      for (const [kind, resource] of [['InferenceObjective', OBJECTIVE_API], ['InferenceModelRewrite', REWRITE_API]] as const) {
        const path = `/apis/${resource.group}/${resource.version}/namespaces/${encodeURIComponent(namespace)}/${resource.resource}`;
        const label = `${kind}/${namespace}`;
        const watch: KindWatch = {
          namespace,
          kind,
          objectives: [],
          rewrites: [],
          skipped: [],
          watcher: new ListWatcher(api, path, {}, timing, {
            changed: (objects) => this.#changed(watch, objects, names),
            restarting: (reason, error, delay) => observer.restarted?.(label, reason, error, delay),
          }, env),
        };
        this.#watches.push(watch);
      }
    }
  }

  /** Starts the watches; `onChange` gets the whole snapshot after every change and must not throw. */
  start(onChange: (objects: InferenceObjects) => void): void {
    this.#onChange = onChange;
    for (const watch of this.#watches) watch.watcher.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.#watches.map((watch) => watch.watcher.stop()));
  }

  status(): InferenceObjectsWatchStatus[] {
    return this.#watches.map((watch) => ({
      ...watch.watcher.status(),
      namespace: watch.namespace,
      kind: watch.kind,
      used: watch.kind === 'InferenceObjective' ? watch.objectives.length : watch.rewrites.length,
      skipped: watch.skipped,
    }));
  }

  #changed(watch: KindWatch, objects: ReadonlyMap<string, unknown>, pools: ReadonlySet<string>): void {
    watch.objectives = [];
    watch.rewrites = [];
    watch.skipped = [];
    for (const [id, object] of objects) {
      const pool = poolRefName(object);
      // Objects of pools switchyard does not watch are someone else's: not listed.
      if ('value' in pool && !pools.has(pool.value)) continue;
      const read: Reading<Objective | RewriteRules> = 'problem' in pool ? pool : watch.kind === 'InferenceObjective' ? readObjective(object, pool.value) : readRewrite(object);
      if ('problem' in read) watch.skipped.push({ id, reason: read.problem });
      else if (watch.kind === 'InferenceObjective') watch.objectives.push(read.value as Objective);
      else watch.rewrites.push(read.value as RewriteRules);
    }
    this.#onChange({ objectives: this.#watches.flatMap((w) => w.objectives), rewrites: this.#watches.flatMap((w) => w.rewrites) });
  }
}
