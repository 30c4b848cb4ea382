/**
 * All Kubernetes sources of one router, built from the `discovery` options:
 * the one selected by `mode` (flags and env can set it) plus the named
 * `sources` of the config file, sharing one API connection. It is itself an
 * endpoint source (the merge of its sources) whose `stop` also closes the
 * connection.
 */
import type { EndpointSetListener, EndpointSource } from '../endpoint.ts';
import { UnionEndpointSource } from '../union-source.ts';
import { KubeApi, type ListWatchApi } from './kube-api.ts';
import { loadKubeConnection, type KubeConnectionOptions } from './kube-config.ts';
import { foreignSources } from './namespace-trust.ts';
import { InferenceObjectsWatch } from './inference-objects-watch.ts';
import { InferencePoolSource, type InferencePoolObserver } from './inference-pool-source.ts';
import { KubernetesEndpointSource, type KubernetesSourceObserver, type KubernetesSourceSpec, type KubernetesSourceStatus } from './kubernetes-source.ts';
import { debugListWatchStatus, type ListWatchTiming } from './list-watcher.ts';

/** One source as configured (namespace optional: the default namespace applies). */
export interface SourceOptions {
  readonly kind: 'pods' | 'endpointslices' | 'inferencepool';
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly service?: string | undefined;
  /** inferencepool: the InferencePool's name. */
  readonly pool?: string | undefined;
  /** inferencepool: the models its endpoints serve (a model bound to the pool). */
  readonly models?: readonly string[] | undefined;
  readonly portName: string;
  readonly port?: number | undefined;
  /** endpointslices: accepted `managed-by` label values (default: the EndpointSlice controller). */
  readonly sliceManagers?: readonly string[] | undefined;
}

/** The `discovery` configuration section (structurally; the router's schema satisfies it). */
export interface DiscoveryOptions extends ListWatchTiming {
  readonly mode: 'static' | 'pods' | 'endpointslices' | 'inferencepool';
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly service?: string | undefined;
  readonly pool?: string | undefined;
  readonly models?: readonly string[] | undefined;
  /** The Service name an InferencePool's endpointPickerRef gives when switchyard is its picker. */
  readonly endpointPickerService: string;
  readonly portName: string;
  readonly port?: number | undefined;
  readonly sliceManagers?: readonly string[] | undefined;
  readonly sources: Readonly<Record<string, SourceOptions>>;
  readonly listTimeoutMs: number;
  readonly serviceAccountDir: string;
  /** Allow sources in namespaces other than the router's own (namespace-trust.ts); default false. */
  readonly crossNamespace?: boolean | undefined;
}

/** Name of the source selected by `discovery.mode`. */
export const MODE_SOURCE_NAME = 'default';

/** The configured Kubernetes sources by name; empty when discovery is static only. */
export function configuredSources(options: DiscoveryOptions): [string, SourceOptions][] {
  const out: [string, SourceOptions][] = [];
  if (options.mode !== 'static') {
    const { namespace, labelSelector, service, pool, models, portName, port, sliceManagers } = options;
    out.push([MODE_SOURCE_NAME, { kind: options.mode, namespace, labelSelector, service, pool, models, portName, port, sliceManagers }]);
  }
  out.push(...Object.entries(options.sources));
  return out;
}

/** One Kubernetes source: pods, EndpointSlices, or an InferencePool. */
export type KubernetesSource = KubernetesEndpointSource | InferencePoolSource;

/** The Kubernetes sources of a router, merged. */
export class KubernetesDiscovery implements EndpointSource {
  readonly sources: readonly KubernetesSource[];
  /** The objectives and rewrites of the InferencePool sources' pools; undefined without such sources. The router starts it. */
  readonly inferenceObjects: InferenceObjectsWatch | undefined;
  readonly #union: UnionEndpointSource;
  readonly #api: { close(): Promise<void> } | undefined;

  /** Tests pass an `api` of their own; otherwise one is built from `connection`. */
  constructor(sources: readonly KubernetesSource[], api?: { close(): Promise<void> }, inferenceObjects?: InferenceObjectsWatch) {
    this.sources = sources;
    this.inferenceObjects = inferenceObjects;
    this.#union = new UnionEndpointSource(sources);
    this.#api = api;
  }

  /**
   * Builds the sources of `options`, or returns undefined when none are
   * configured. @throws Error when the API connection or a source is not
   * configured well enough to start (no kubeconfig, no namespace), or when
   * a source watches a namespace outside the router's own without
   * `crossNamespace`.
   */
  static create(options: DiscoveryOptions, connection: KubeConnectionOptions, observer: InferencePoolObserver = {}): KubernetesDiscovery | undefined {
    const configured = configuredSources(options);
    if (configured.length === 0) return undefined;
    const kube = loadKubeConnection(connection);
    const api = new KubeApi(kube.config, { listTimeoutMs: options.listTimeoutMs });
    const sources = configured.map(([name, source]) => {
      const namespace = source.namespace ?? kube.defaultNamespace;
      if (namespace === undefined) throw new Error(`discovery source ${name}: no namespace given and none found in ${connection.serviceAccountDir}/namespace`);
      if (source.kind === 'inferencepool') return new InferencePoolSource(name, poolSpecOf(name, source, namespace, options), api, options, observer);
      return new KubernetesEndpointSource(name, specOf(name, { ...source, kind: source.kind }, namespace), api, options, observer);
    });
    if (options.crossNamespace !== true) {
      const home = sources.find((source) => source.name === MODE_SOURCE_NAME)?.namespace ?? kube.defaultNamespace;
      const foreign = foreignSources(sources.map((source) => ({ name: source.name, namespace: source.namespace })), home);
      const first = foreign[0];
      if (first !== undefined) {
        throw new Error(
          `discovery source ${first.name} watches namespace ${first.namespace}, outside the router's own (${home}): matching pods there would receive prompts; set discovery.crossNamespace to allow it, and give the source allowedModels`,
        );
      }
    }
    return new KubernetesDiscovery(sources, api, inferenceObjectsOf(sources, api, options, observer));
  }

  /** Builds one source over a given API (tests, embedding). */
  static over(api: ListWatchApi, sources: readonly [string, KubernetesSourceSpec][], timing: ListWatchTiming, observer: KubernetesSourceObserver = {}): KubernetesDiscovery {
    return new KubernetesDiscovery(sources.map(([name, spec]) => new KubernetesEndpointSource(name, spec, api, timing, observer)));
  }

  start(listener: EndpointSetListener): void {
    this.#union.start(listener);
  }

  async stop(): Promise<void> {
    await Promise.all([this.#union.stop(), this.inferenceObjects?.stop()]);
    await this.#api?.close();
  }

  /** Every source's state, for metrics. */
  status(): KubernetesSourceStatus[] {
    return this.sources.map((source) => source.status());
  }

  /** Every source's state for `/debug/endpoints`: times as ISO strings, absent values as null. */
  debugStatus(): Record<string, unknown>[] {
    return this.status().map(debugListWatchStatus);
  }
}

/** The watch of the pools' objectives and rewrites, when some source is an InferencePool. */
function inferenceObjectsOf(sources: readonly KubernetesSource[], api: ListWatchApi, timing: ListWatchTiming, observer: KubernetesSourceObserver): InferenceObjectsWatch | undefined {
  const pools = new Map<string, Set<string>>();
  for (const source of sources) {
    if (!(source instanceof InferencePoolSource)) continue;
    const names = pools.get(source.namespace) ?? new Set<string>();
    names.add(source.spec.pool);
    pools.set(source.namespace, names);
  }
  return pools.size === 0 ? undefined : new InferenceObjectsWatch(api, pools, timing, observer);
}

function poolSpecOf(name: string, source: SourceOptions, namespace: string, options: DiscoveryOptions): InferencePoolSource['spec'] {
  if (source.pool === undefined) throw new Error(`discovery source ${name}: inferencepool needs a pool`);
  return { namespace, pool: source.pool, models: source.models, ownPickerService: options.endpointPickerService };
}

function specOf(name: string, source: SourceOptions & { readonly kind: KubernetesSourceSpec['kind'] }, namespace: string): KubernetesSourceSpec {
  const port = { portName: source.portName, ...(source.port === undefined ? {} : { port: source.port }) };
  if (source.kind === 'pods') {
    if (source.labelSelector === undefined) throw new Error(`discovery source ${name}: pods need a labelSelector`);
    return { kind: 'pods', namespace, labelSelector: source.labelSelector, ...port };
  }
  if (source.service === undefined) throw new Error(`discovery source ${name}: endpointslices need a service`);
  return { kind: 'endpointslices', namespace, service: source.service, sliceManagers: source.sliceManagers, ...port };
}

/** The logger calls the discovery makes (pino's shape). */
export interface DiscoveryLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

/**
 * Logs state changes only: first sync, each skipped object once, API failing, API back, and restarts
 * (routine ones, periodic re-lists and server-closed watches, at debug).
 */
export function discoveryLogObserver(logger: DiscoveryLogger): InferencePoolObserver {
  return {
    poolChanged: (source, pool, problem, foreignPicker) => {
      if (problem !== undefined) logger.warn({ source, pool, problem }, 'InferencePool gives no endpoints');
      else if (foreignPicker !== undefined) logger.warn({ source, pool, endpointPicker: foreignPicker }, 'InferencePool names another endpoint picker; switchyard routes its pods by its own rules, not that picker\'s');
      else logger.info({ source, pool }, 'InferencePool in use');
    },
    synced: (source, endpoints, skipped) => logger.info({ source, endpoints, skipped }, 'discovery synced (first list done)'),
    skipped: (source, id, reason) => logger.info({ source, object: id, reason }, 'discovery skipped an object: it gets no endpoint'),
    failing: (source, error) => logger.warn({ source, error }, 'Kubernetes API failing; keeping the last endpoint set'),
    recovered: (source, failedForMs) => logger.info({ source, failedForMs }, 'Kubernetes API answering again; re-listed'),
    restarted: (source, reason, error, delayMs) => {
      const routine = reason === 'resync' || reason === 'closed';
      const fields = { source, reason, error, delayMs };
      if (routine) logger.debug(fields, 'discovery watch restarting with a re-list');
      else logger.info(fields, 'discovery watch restarting with a re-list');
    },
  };
}
