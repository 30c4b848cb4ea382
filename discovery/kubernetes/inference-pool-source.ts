/**
 * An endpoint source fed by one `InferencePool` (inference-pool.ts): the
 * pool is list+watched by name, and the pods its selector names are
 * list+watched in turn, each target port of each pod its own endpoint.
 *
 * When the pool's selector or target ports change, the pod watch is replaced
 * by one for the new selector; the old endpoint set stays in use until the
 * new watch has listed, so routing never sees a gap. A pool that is absent,
 * of the wrong shape, or only at the older v1alpha2 version gives an empty
 * set and a status (and one log line) that says why; while the API is
 * unreachable the last set stays, as for every Kubernetes source.
 *
 * A pool names the endpoint picker that serves it. switchyard routes the
 * pool's pods by its own rules whatever that picker is; when the pool names
 * another picker, the status and the log say so, so nobody takes
 * switchyard's choices for that picker's.
 */
import type { EndpointSetListener, EndpointSource } from '../endpoint.ts';
import type { ListWatchApi } from './kube-api.ts';
import { describePicker, isOwnPicker, OLD_POOL_API, POOL_API, readPool, type PoolReading, type PoolSpec } from './inference-pool.ts';
import { KubernetesEndpointSource, type KubernetesSourceObserver, type KubernetesSourceStatus } from './kubernetes-source.ts';
import { ListWatcher, REAL_ENVIRONMENT, type Environment, type ListWatchTiming } from './list-watcher.ts';

/** What to watch. */
export interface InferencePoolSourceSpec {
  readonly namespace: string;
  /** The InferencePool's name. */
  readonly pool: string;
  /** The models the pool's endpoints serve (a model bound to the pool), in place of annotations and /v1/models. */
  readonly models?: readonly string[] | undefined;
  /** The Service name a pool gives as its endpoint picker when switchyard is that picker. */
  readonly ownPickerService: string;
}

/** The pod watch's port name: never read, since the pool's target ports decide every endpoint's port. */
const POOL_PORTS = 'targetPorts';

/** The pool's state in `/debug/endpoints`. */
export interface PoolStatus {
  /** `namespace/name`. */
  readonly pool: string;
  /** The pool was found at inference.networking.k8s.io/v1 and has a usable shape. */
  readonly usable: boolean;
  /** Why the pool gives no endpoints (absent, unsupported version, bad shape); null when usable. */
  readonly problem: string | null;
  readonly selector: string | null;
  readonly targetPorts: readonly number[];
  /** The picker the pool names (`Service/name:port`), or null. */
  readonly endpointPicker: string | null;
  /** Whether that picker is switchyard itself; false: switchyard routes the pool by its own rules, not that picker's. */
  readonly endpointPickerIsSwitchyard: boolean;
}

/** Status of an InferencePool source: its pod watch's, plus the pool's. */
export interface InferencePoolSourceStatus extends KubernetesSourceStatus {
  readonly pool: PoolStatus;
}

/** Observer calls beyond the Kubernetes sources' own. */
export interface InferencePoolObserver extends KubernetesSourceObserver {
  /** The pool became unusable (`problem`), usable again (undefined), or names a picker that is not switchyard (`foreignPicker`). Called on changes only. */
  poolChanged?(source: string, pool: string, problem: string | undefined, foreignPicker: string | undefined): void;
}

/** One InferencePool as an {@link EndpointSource}. */
export class InferencePoolSource implements EndpointSource {
  readonly name: string;
  readonly spec: InferencePoolSourceSpec;
  readonly #api: ListWatchApi;
  readonly #timing: ListWatchTiming;
  readonly #observer: InferencePoolObserver;
  readonly #env: Environment;
  readonly #poolWatcher: ListWatcher;
  #listener: EndpointSetListener | undefined;
  #pods: KubernetesEndpointSource | undefined;
  /** Selector and ports of the current pod watch; '' for none (an unusable pool), undefined before the first reading. */
  #podsKey: string | undefined;
  #reading: PoolReading = { problem: 'not listed yet' };
  #reported = '';
  #version = 0;
  #stopped = false;
  /** Bumped per pool change, so a stale old-version check cannot overwrite a newer reading. */
  #generation = 0;

  constructor(name: string, spec: InferencePoolSourceSpec, api: ListWatchApi, timing: ListWatchTiming, observer: InferencePoolObserver = {}, env: Environment = REAL_ENVIRONMENT) {
    this.name = name;
    this.spec = spec;
    this.#api = api;
    this.#timing = timing;
    this.#observer = observer;
    this.#env = env;
    this.#poolWatcher = new ListWatcher(api, poolsPath(POOL_API, spec.namespace), byName(spec.pool), timing, {
      changed: (objects) => this.#onPool(objects),
      restarting: (reason, error, delay) => {
        observer.restarted?.(name, reason, error, delay);
        // The API serves no such resource: the CRD is not installed, so no pool exists (and none is routed to) until it is.
        if (error !== undefined && / answered 404\b/.test(error)) this.#use({ problem: `the API serves no ${POOL_API.resource}.${POOL_API.group}/${POOL_API.version}: install the Gateway API Inference Extension's CRDs` });
      },
    }, env);
  }

  /** The namespace of the pool and its pods. */
  get namespace(): string {
    return this.spec.namespace;
  }

  start(listener: EndpointSetListener): void {
    this.#listener = listener;
    this.#poolWatcher.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all([this.#poolWatcher.stop(), this.#pods?.stop()]);
  }

  status(): InferencePoolSourceStatus {
    const poolWatch = this.#poolWatcher.status();
    const pods = this.#pods?.status();
    const reading = this.#reading;
    const spec = 'spec' in reading ? reading.spec : undefined;
    const picker = spec?.endpointPicker;
    return {
      name: this.name,
      kind: 'inferencepool',
      namespace: this.spec.namespace,
      selector: spec?.selector ?? '',
      // The pool's watch first: its failure is the one that says the API or the CRD is missing.
      synced: poolWatch.synced && (pods?.synced ?? true),
      lastListAt: pods?.lastListAt ?? poolWatch.lastListAt,
      lastEventAt: pods?.lastEventAt ?? poolWatch.lastEventAt,
      error: poolWatch.error ?? pods?.error,
      errorSince: poolWatch.errorSince ?? pods?.errorSince,
      restarts: pods === undefined ? poolWatch.restarts : sumRestarts(poolWatch.restarts, pods.restarts),
      objects: pods?.objects ?? 0,
      healthy: poolWatch.synced && poolWatch.error === undefined && (pods?.healthy ?? true),
      endpoints: pods?.endpoints ?? 0,
      skipped: pods?.skipped ?? [],
      skippedCount: pods?.skippedCount ?? 0,
      pool: {
        pool: `${this.spec.namespace}/${this.spec.pool}`,
        usable: spec !== undefined,
        problem: 'problem' in reading ? reading.problem : null,
        selector: spec?.selector ?? null,
        targetPorts: spec?.targetPorts ?? [],
        endpointPicker: picker === undefined ? null : describePicker(picker),
        endpointPickerIsSwitchyard: isOwnPicker(picker, this.spec.ownPickerService),
      },
    };
  }

  #onPool(objects: ReadonlyMap<string, unknown>): void {
    const generation = ++this.#generation;
    const object = objects.get(`${this.spec.namespace}/${this.spec.pool}`);
    if (object === undefined) {
      this.#use({ problem: `InferencePool ${this.spec.pool} not found at ${POOL_API.group}/${POOL_API.version}` });
      void this.#checkOldVersion(generation);
      return;
    }
    this.#use(readPool(object));
  }

  /** A pool missing at v1 may exist at the old version: say so rather than "not found". */
  async #checkOldVersion(generation: number): Promise<void> {
    let found = false;
    try {
      const list = await this.#api.list(poolsPath(OLD_POOL_API, this.spec.namespace), byName(this.spec.pool), AbortSignal.timeout(10_000));
      found = list.items.length > 0;
    } catch {
      // The old CRD is not installed, or not readable: "not found" stands.
    }
    if (!found || generation !== this.#generation || this.#stopped) return;
    this.#use({
      problem: `InferencePool ${this.spec.pool} exists only at ${OLD_POOL_API.group}/${OLD_POOL_API.version}, which switchyard does not support: recreate it as ${POOL_API.group}/${POOL_API.version} (selector.matchLabels, targetPorts, endpointPickerRef)`,
    });
  }

  /** Applies a new reading: a new pod watch when the selector or ports changed, an empty set when the pool is unusable. */
  #use(reading: PoolReading): void {
    this.#reading = reading;
    this.#report(reading);
    const spec = 'spec' in reading ? reading.spec : undefined;
    const key = spec === undefined ? '' : `${spec.selector}\0${spec.targetPorts.join(',')}`;
    if (key === this.#podsKey) return;
    this.#podsKey = key;
    void this.#pods?.stop();
    const pods = spec === undefined ? undefined : this.#podWatch(spec);
    this.#pods = pods;
    if (pods === undefined) this.#emit([]);
    // A replaced watch may still deliver a set while it stops: only the current one's count.
    else pods.start((set) => this.#pods === pods && this.#emit(set.endpoints));
  }

  #podWatch(spec: PoolSpec): KubernetesEndpointSource {
    const { namespace, models } = this.spec;
    // The source's first sync is its own first set ({@link #emit}), not each replaced pod watch's.
    const observer: KubernetesSourceObserver = { ...this.#observer, synced: () => undefined };
    return new KubernetesEndpointSource(this.name, { kind: 'pods', namespace, labelSelector: spec.selector, targetPorts: spec.targetPorts, models, portName: POOL_PORTS }, this.#api, this.#timing, observer, this.#env);
  }

  #emit(endpoints: Parameters<EndpointSetListener>[0]['endpoints']): void {
    if (this.#stopped) return;
    this.#listener?.({ version: ++this.#version, endpoints });
    if (this.#version === 1) this.#observer.synced?.(this.name, endpoints.length, this.#pods?.status().skippedCount ?? 0);
  }

  #report(reading: PoolReading): void {
    const problem = 'problem' in reading ? reading.problem : undefined;
    const picker = 'spec' in reading ? reading.spec.endpointPicker : undefined;
    const foreign = picker !== undefined && !isOwnPicker(picker, this.spec.ownPickerService) ? describePicker(picker) : undefined;
    const key = `${problem ?? ''}\0${foreign ?? ''}`;
    if (key === this.#reported) return;
    this.#reported = key;
    this.#observer.poolChanged?.(this.name, `${this.spec.namespace}/${this.spec.pool}`, problem, foreign);
  }
}

/** The collection path of pools of `api` in `namespace`. */
function poolsPath(api: { group: string; version: string; resource: string }, namespace: string): string {
  return `/apis/${api.group}/${api.version}/namespaces/${encodeURIComponent(namespace)}/${api.resource}`;
}

/** A list or watch of the one object named `name`. */
function byName(name: string): Record<string, string> {
  return { fieldSelector: `metadata.name=${name}` };
}

function sumRestarts<T extends Readonly<Record<string, number>>>(a: T, b: T): T {
  const out: Record<string, number> = { ...a };
  for (const [reason, count] of Object.entries(b)) out[reason] = (out[reason] ?? 0) + count;
  return out as T;
}
