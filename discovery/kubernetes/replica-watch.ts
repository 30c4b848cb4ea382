/**
 * Counts the router's own replicas from the EndpointSlices of its own
 * Service, so that what each replica takes as its share of an engine without
 * Redis (the safe start, the load formulas, degraded quotas) follows every
 * rollout and scale step instead of a number fixed at install.
 *
 * Every pod the Service's slices list counts unless it is terminating:
 * starting pods (not ready yet) are about to take their share, and counting
 * them errs on the side the count is for (admit less, never more). A pod
 * listed in two slices at once (the controller moves endpoints between
 * slices; dual-stack Services have a slice per address family) counts once.
 * Only the Service's own slices count (slice-endpoints.ts ownership rules).
 * While the API cannot be reached the last count stands (the list+watch loop
 * keeps its last good copy).
 */
import { KubeApi, type ListWatchApi } from './kube-api.ts';
import { loadKubeConnection, type KubeConnectionOptions } from './kube-config.ts';
import { debugListWatchStatus, ListWatcher, REAL_ENVIRONMENT, type Environment, type ListWatchStatus, type ListWatchTiming } from './list-watcher.ts';
import { ownershipProblem, SERVICE_NAME_LABEL, type EndpointSliceObject } from './slice-endpoints.ts';

/** Pods listed by the Service's own slices that are not terminating. */
export function countReplicas(slices: Iterable<EndpointSliceObject>, service: string): number {
  const pods = new Set<string>();
  for (const slice of slices) {
    if (ownershipProblem(slice, { service }) !== undefined) continue;
    for (const entry of slice.endpoints ?? []) {
      if (entry.conditions?.terminating === true) continue;
      const name = entry.targetRef?.kind === 'Pod' ? entry.targetRef.name : undefined;
      const key = name ? `pod/${name}` : entry.addresses?.[0];
      if (key !== undefined) pods.add(key);
    }
  }
  return pods.size;
}

/** What the watch tells; callbacks must not throw. */
export interface ReplicaWatchObserver {
  /** A new count (the first list's included). */
  counted(replicas: number): void;
  /** Lists started failing (the first failure after a success, or before the first); the last count stands. */
  failing?(error: string): void;
  /** A list succeeded again after failures. */
  recovered?(): void;
}

/** `/debug/endpoints` view of the count's watch. */
export interface ReplicaWatchStatus extends ListWatchStatus {
  readonly namespace: string;
  readonly service: string;
  /** Replicas counted at the last change; undefined before the first list. */
  readonly replicas: number | undefined;
}

/** The list+watch of one Service's EndpointSlices, reduced to a replica count. */
export class ReplicaWatch {
  readonly namespace: string;
  readonly service: string;
  readonly #watcher: ListWatcher;
  readonly #api: { close(): Promise<void> } | undefined;
  #replicas: number | undefined;
  #failing = false;

  /**
   * Watches `service` in the router's own namespace over its own API
   * connection (closed by `stop`).
   * @throws Error when no Kubernetes API is configured or no namespace is known.
   */
  static connect(connection: KubeConnectionOptions, service: string, timing: ListWatchTiming & { readonly listTimeoutMs: number }, observer: ReplicaWatchObserver): ReplicaWatch {
    let kube: ReturnType<typeof loadKubeConnection>;
    try {
      kube = loadKubeConnection(connection);
    } catch (err) {
      throw new Error(`load.replicasFromService counts the router's replicas through the Kubernetes API: ${(err as Error).message}`, { cause: err });
    }
    if (kube.defaultNamespace === undefined) throw new Error(`load.replicasFromService: the router's namespace is not known (no ${connection.serviceAccountDir}/namespace)`);
    const api = new KubeApi(kube.config, { listTimeoutMs: timing.listTimeoutMs });
    return new ReplicaWatch(api, kube.defaultNamespace, service, timing, observer, REAL_ENVIRONMENT, api);
  }

  /** `owned`: closed by `stop`. */
  constructor(
    api: ListWatchApi,
    namespace: string,
    service: string,
    timing: ListWatchTiming,
    observer: ReplicaWatchObserver,
    env: Environment = REAL_ENVIRONMENT,
    owned?: { close(): Promise<void> },
  ) {
    this.#api = owned;
    this.namespace = namespace;
    this.service = service;
    this.#watcher = new ListWatcher(
      api,
      `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices`,
      { labelSelector: `${SERVICE_NAME_LABEL}=${service}` },
      timing,
      {
        changed: (objects) => {
          const replicas = countReplicas(objects.values() as Iterable<EndpointSliceObject>, service);
          if (replicas === this.#replicas) return;
          this.#replicas = replicas;
          observer.counted(replicas);
        },
        listed: () => {
          if (!this.#failing) return;
          this.#failing = false;
          observer.recovered?.();
        },
        restarting: (_reason, error) => {
          if (error === undefined || this.#failing) return;
          this.#failing = true;
          observer.failing?.(error);
        },
      },
      env,
    );
  }

  start(): void {
    this.#watcher.start();
  }

  async stop(): Promise<void> {
    await this.#watcher.stop();
    await this.#api?.close();
  }

  status(): ReplicaWatchStatus {
    return { namespace: this.namespace, service: this.service, replicas: this.#replicas, ...this.#watcher.status() };
  }

  /** {@link status} for `/debug/endpoints`: times as ISO strings, absent values as null. */
  debugStatus(): Record<string, unknown> {
    return { ...debugListWatchStatus(this.status()), replicas: this.#replicas ?? null };
  }
}
