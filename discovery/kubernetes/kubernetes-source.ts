/**
 * An endpoint source fed by the Kubernetes API: the pods matching a label
 * selector in one namespace, or the EndpointSlices of one Service. The first
 * set is emitted after the first successful list (so readiness waits for it);
 * later sets only when the endpoints actually change. While the API is
 * unreachable nothing is emitted, so the last good set stays in use.
 */
import type { Endpoint, EndpointSetListener, EndpointSource } from '../endpoint.ts';
import type { ListWatchApi } from './kube-api.ts';
import { ListWatcher, REAL_ENVIRONMENT, type Environment, type ListWatchStatus, type ListWatchTiming, type RestartReason } from './list-watcher.ts';
import { podEndpoint, poolPodEndpoints, type PodMapping, type PodObject, type PodPortSettings } from './pod-endpoint.ts';
import { SERVICE_NAME_LABEL, sliceEndpoints, type EndpointSliceObject } from './slice-endpoints.ts';

/** What to watch. */
export type KubernetesSourceSpec =
  | ({
      readonly kind: 'pods';
      readonly namespace: string;
      readonly labelSelector: string;
      /** An InferencePool's `targetPorts`: each selected pod gives one endpoint per port, `namespace/name:port` (the port settings aside). */
      readonly targetPorts?: readonly number[] | undefined;
      /** The models every endpoint serves, in place of the pods' annotations and the /v1/models probe (a model bound to a pool). */
      readonly models?: readonly string[] | undefined;
    } & PodPortSettings)
  | ({
      readonly kind: 'endpointslices';
      readonly namespace: string;
      readonly service: string;
      /** Accepted `endpointslice.kubernetes.io/managed-by` values (default: the EndpointSlice controller); `*` accepts any. */
      readonly sliceManagers?: readonly string[] | undefined;
    } & PodPortSettings);

/** State changes worth a log line or a metric; callbacks must not throw. */
export interface KubernetesSourceObserver {
  /** The first list succeeded: `endpoints` mapped, `skipped` objects gave none. */
  synced?(source: string, endpoints: number, skipped: number): void;
  /** An object gives no endpoint, for this reason: called once until it maps or its reason changes. */
  skipped?(source: string, id: string, reason: string): void;
  /** The loop restarted; `error` is set for failures. */
  restarted?(source: string, reason: RestartReason, error: string | undefined, delayMs: number): void;
  /** The API started failing (first failure after a success). */
  failing?(source: string, error: string): void;
  /** A list succeeded again after failures. */
  recovered?(source: string, failedForMs: number): void;
}

/** `/debug/endpoints` view of one source. */
export interface KubernetesSourceStatus extends ListWatchStatus {
  readonly name: string;
  readonly kind: KubernetesSourceSpec['kind'] | 'inferencepool';
  readonly namespace: string;
  /** Label selector of the watch. */
  readonly selector: string;
  /** The API answers (no failure since the last successful list). */
  readonly healthy: boolean;
  /** Endpoints in the last emitted set. */
  readonly endpoints: number;
  /** Objects that gave no endpoint, with why (at most 20). */
  readonly skipped: readonly { readonly id: string; readonly reason: string }[];
  /** How many objects gave no endpoint (all of them, not only those listed). */
  readonly skippedCount: number;
}

const MAX_SKIPPED_SHOWN = 20;

/** One Kubernetes-backed {@link EndpointSource}. */
export class KubernetesEndpointSource implements EndpointSource {
  readonly name: string;
  readonly spec: KubernetesSourceSpec;
  readonly #watcher: ListWatcher;
  readonly #observer: KubernetesSourceObserver;
  readonly #env: Environment;
  #listener: EndpointSetListener | undefined;
  #version = 0;
  #last: readonly Endpoint[] | undefined;
  #lastKey = '';
  #skipped: { id: string; reason: string }[] = [];
  /** The reason last reported per skipped object, so each is reported once. */
  #reportedSkips = new Map<string, string>();
  #failing = false;
  #failingSince: number | undefined;

  constructor(name: string, spec: KubernetesSourceSpec, api: ListWatchApi, timing: ListWatchTiming, observer: KubernetesSourceObserver = {}, env: Environment = REAL_ENVIRONMENT) {
    this.name = name;
    this.spec = spec;
    this.#observer = observer;
    this.#env = env;
    const { path, selector } = collection(spec);
    this.#watcher = new ListWatcher(
      api,
      path,
      { labelSelector: selector },
      timing,
      {
        changed: (objects) => this.#onObjects(objects),
        listed: () => this.#onListed(),
        restarting: (reason, error, delay) => this.#onRestart(reason, error, delay),
      },
      env,
    );
  }

  /** The namespace it watches. */
  get namespace(): string {
    return this.spec.namespace;
  }

  start(listener: EndpointSetListener): void {
    this.#listener = listener;
    this.#watcher.start();
  }

  stop(): Promise<void> {
    return this.#watcher.stop();
  }

  status(): KubernetesSourceStatus {
    const watch = this.#watcher.status();
    return {
      name: this.name,
      kind: this.spec.kind,
      namespace: this.spec.namespace,
      selector: collection(this.spec).selector,
      ...watch,
      healthy: watch.synced && watch.error === undefined,
      endpoints: this.#last?.length ?? 0,
      skipped: this.#skipped.slice(0, MAX_SKIPPED_SHOWN),
      skippedCount: this.#skipped.length,
    };
  }

  #onObjects(objects: ReadonlyMap<string, unknown>): void {
    const mapped = toEndpoints(this.spec, objects);
    // Every endpoint names this source: its allow-list and engine key are chosen by that name.
    const endpoints = mapped.endpoints.map((endpoint): Endpoint => ({ ...endpoint, source: this.name }));
    const skipped = mapped.skipped;
    endpoints.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.#skipped = skipped;
    this.#reportSkips(skipped);
    const key = JSON.stringify(endpoints);
    if (this.#last !== undefined && key === this.#lastKey) return;
    const first = this.#last === undefined;
    this.#last = endpoints;
    this.#lastKey = key;
    this.#listener?.({ version: ++this.#version, endpoints });
    if (first) this.#observer.synced?.(this.name, endpoints.length, skipped.length);
  }

  #reportSkips(skipped: readonly { id: string; reason: string }[]): void {
    const reported = new Map<string, string>();
    for (const { id, reason } of skipped) {
      if (this.#reportedSkips.get(id) !== reason) this.#observer.skipped?.(this.name, id, reason);
      reported.set(id, reason);
    }
    this.#reportedSkips = reported;
  }

  #onListed(): void {
    if (!this.#failing) return;
    this.#failing = false;
    const since = this.#failingSince;
    this.#observer.recovered?.(this.name, since === undefined ? 0 : this.#env.now() - since);
  }

  #onRestart(reason: RestartReason, error: string | undefined, delay: number): void {
    this.#observer.restarted?.(this.name, reason, error, delay);
    if (error === undefined || reason === 'gone' || this.#failing) return;
    this.#failing = true;
    this.#failingSince = this.#watcher.status().errorSince ?? this.#env.now();
    this.#observer.failing?.(this.name, error);
  }
}

function collection(spec: KubernetesSourceSpec): { path: string; selector: string } {
  const ns = encodeURIComponent(spec.namespace);
  switch (spec.kind) {
    case 'pods':
      return { path: `/api/v1/namespaces/${ns}/pods`, selector: spec.labelSelector };
    case 'endpointslices':
      return { path: `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, selector: `${SERVICE_NAME_LABEL}=${spec.service}` };
  }
}

function toEndpoints(spec: KubernetesSourceSpec, objects: ReadonlyMap<string, unknown>): { endpoints: Endpoint[]; skipped: { id: string; reason: string }[] } {
  if (spec.kind === 'endpointslices') return sliceEndpoints(objects.values() as Iterable<EndpointSliceObject>, spec);
  const endpoints: Endpoint[] = [];
  const skipped: { id: string; reason: string }[] = [];
  const { targetPorts, models } = spec;
  for (const [id, pod] of objects) {
    const mappings: PodMapping[] = targetPorts === undefined ? [podEndpoint(id, pod as PodObject, spec)] : poolPodEndpoints(id, pod as PodObject, targetPorts);
    for (const mapped of mappings) {
      if ('skipped' in mapped) skipped.push({ id, reason: mapped.skipped });
      else endpoints.push(models === undefined ? mapped.endpoint : { ...mapped.endpoint, models });
    }
  }
  return { endpoints, skipped };
}
