/**
 * The composition root: builds the whole router from validated configuration.
 * The only place that wires modules together; nothing else reads the
 * environment.
 */
import type { Writable } from 'node:stream';
import type { EndpointSource } from '../discovery/endpoint.ts';
import type { Config } from './config/schema.ts';
import type { LoadView } from './load/load-view.ts';
import { createLogger, describeFailure, type Logger } from './log.ts';
import type { RouterMetrics, BackgroundTask } from './metrics/metrics.ts';
import type { SharedStateMetrics } from './metrics/shared-state-metrics.ts';
import type { EventLoopLagMonitor } from './admission/event-loop-lag.ts';
import type { Drain } from './server/drain.ts';
import { listen } from './server/http-server.ts';
import { VERSION } from './version.ts';
import { readExporterHeaders } from './config/exporter-headers.ts';
import type { Tracing } from './tracing/otel-tracing.ts';
import { buildCapacity, type Capacity } from './compose/capacity.ts';
import { buildDiscovery, type Discovery } from './compose/discovery.ts';
import { buildInferenceExtension, type InferenceExtension } from './compose/inference-extension.ts';
import { buildEngineWatch, type EngineWatch } from './compose/engine-watch.ts';
import { buildLoad, type Load } from './compose/load.ts';
import { buildMetrics } from './compose/metrics.ts';
import { buildRequestPath, type RequestPath } from './compose/request-path.ts';
import { buildScheduling } from './compose/scheduling.ts';
import { readSecrets, type Secrets } from './compose/secrets.ts';
import { buildServers, type Servers } from './compose/servers.ts';
import { buildSharedState, type SharedState } from './compose/shared-state.ts';

export { perEndpointCap } from './compose/scheduling.ts';

/** Ports actually bound (useful when configured as 0). */
export interface BoundPorts {
  readonly traffic: number;
  readonly admin: number;
}

/** Optional overrides for embedding the router (tests, demo). */
export interface RouterOptions {
  readonly logger?: Logger;
  /** Endpoint source instead of the ones configured (static list, Kubernetes). */
  readonly source?: EndpointSource;
  /** Environment for Kubernetes credentials (KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT); default: the process's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Event-loop lag monitor instead of the default one (tests shorten its start-up grace). */
  readonly lagMonitor?: EventLoopLagMonitor;
  /** Where the access log goes (config `accessLog`); stdout by default. */
  readonly accessLogOut?: Writable;
  /** Request tracing, from {@link loadTracing} (tracing on); undefined: none. */
  readonly tracing?: Tracing | undefined;
}

/**
 * The OpenTelemetry tracing `config.tracing` asks for, or undefined when it
 * is off: then no OpenTelemetry module is loaded. Reads the exporter
 * headers file (a ConfigError when unusable).
 */
export async function loadTracing(config: Config, logger: Logger): Promise<Tracing | undefined> {
  if (!config.tracing.enabled) return undefined;
  const headers = config.tracing.headersFile === undefined ? {} : readExporterHeaders(config.tracing.headersFile);
  const { createTracing } = await import('./tracing/otel-tracing.ts');
  return createTracing(config.tracing, { headers, version: VERSION, log: logger });
}

/** A fully wired router process. */
export class Router {
  readonly config: Config;
  readonly logger: Logger;
  readonly view: LoadView;
  readonly metrics: RouterMetrics;
  readonly sharedMetrics: SharedStateMetrics;
  /** SIGTERM drain state (readiness and the traffic listener read it). */
  readonly drain: Drain;
  readonly #tracing: Tracing | undefined;
  readonly #secrets: Secrets;
  readonly #load: Load;
  readonly #capacity: Capacity;
  readonly #discovery: Discovery;
  readonly #shared: SharedState;
  readonly #engineWatch: EngineWatch;
  readonly #inferenceExtension: InferenceExtension;
  readonly #requestPath: RequestPath;
  readonly #servers: Servers;

  /**
   * Builds every part from `config`; nothing is started. Each builder takes
   * the bundles built before it. @throws ConfigError (or another Error) for an
   * unusable secret file or Kubernetes connection.
   */
  constructor(config: Config, options: RouterOptions = {}) {
    this.config = config;
    const logger = (this.logger = options.logger ?? createLogger(config.logLevel));
    this.#tracing = options.tracing;
    const env = options.env ?? process.env;
    const secrets = (this.#secrets = readSecrets(config, logger));
    const load = (this.#load = buildLoad(config, env, logger));
    const view = (this.view = load.view);
    const capacity = (this.#capacity = buildCapacity(config, view, options.lagMonitor));
    const discovery = (this.#discovery = buildDiscovery(config, { env, logger, source: options.source, credentials: secrets.credentials, probeAgent: capacity.probeAgent }));
    const metrics = (this.metrics = buildMetrics({ view, capacity, logger }));
    const shared = (this.#shared = buildSharedState(config, {
      view,
      replicas: load.replicas,
      registry: metrics.registry,
      logger,
      tenants: secrets.apiKeys !== undefined,
      // The admin port is built last: the store reports status changes from connection events, which come after construction.
      published: () => this.#servers.admin.publish(),
      onTaskFailure: (task, err) => this.reportBackgroundFailure(task, err),
    }));
    this.sharedMetrics = shared.metrics;
    const engineWatch = (this.#engineWatch = buildEngineWatch(config, { view, capacity, discovery, credentials: secrets.credentials, metrics, logger }));
    const scheduling = buildScheduling(config, { view, metrics, sharedMetrics: shared.metrics });
    const inferenceExtension = (this.#inferenceExtension = buildInferenceExtension(config, { kubernetes: discovery.kubernetes, metrics, logger }));
    const requestPath = (this.#requestPath = buildRequestPath(config, {
      inferenceExtension,
      logger,
      secrets,
      view,
      capacity,
      metrics,
      shared,
      scheduling,
      accessLogOut: options.accessLogOut,
      tracer: options.tracing?.tracer,
    }));
    this.#servers = buildServers(config, { logger, adminToken: secrets.adminToken, load, capacity, discovery, inferenceExtension, metrics, shared, scraper: engineWatch.scraper, requestPath });
    this.drain = this.#servers.drain;
  }

  /**
   * Logs and counts a failure nobody was waiting for: a background task's
   * (`task` is a fixed name, a metric label) or one the process-level net
   * caught. Only the error's name, its message cut short and its stack
   * frames are logged: never a request body, a header or a key.
   */
  reportBackgroundFailure(task: BackgroundTask, err: unknown): void {
    this.metrics.countBackgroundFailure(task);
    this.logger.error({ task, err: describeFailure(err) }, 'background failure; the router keeps running');
  }

  /** Requests open on the traffic port right now. */
  get inFlight(): number {
    return this.#capacity.openRequests.count;
  }

  /**
   * Starts discovery and both listeners. Rejects when either port cannot be
   * bound, after releasing everything it started: the caller must exit
   * non-zero, since a process without its traffic port would keep answering
   * probes with 200 while serving nothing, and one without its admin port
   * would keep scraping with no probe to say so.
   */
  async start(): Promise<BoundPorts> {
    this.#discovery.allowList.start((set) => {
      this.view.update(set);
      this.#servers.admin.publish();
      this.logger.info({ setVersion: set.version, endpoints: set.endpoints.length }, 'endpoint set updated');
    });
    this.#engineWatch.scraper.start();
    this.#inferenceExtension.start();
    this.#load.replicaWatch?.start();
    this.#secrets.apiKeys?.start(this.config.auth.reloadIntervalMs);
    this.#shared.quotas?.start();
    this.#shared.redis?.fleet.start();
    this.#shared.redis?.safeStart?.start();
    this.#capacity.lag.start();
    const { discovery } = this.config;
    if (this.config.backends.length === 0 && discovery.mode === 'static' && Object.keys(discovery.sources).length === 0) {
      this.logger.warn('no engines configured: every model is unknown until --backend URL, or discovery.mode pods, endpointslices or inferencepool, names some');
    }
    try {
      const admin = await bindOrExplain('admin', this.config.adminListen, () => this.#servers.admin.start());
      const traffic = await bindOrExplain('traffic', this.config.listen, () => listen(this.#servers.traffic, this.config.listen, this.config.server.listenBacklog));
      this.logger.info({ traffic, admin, ...this.#startupSummary() }, 'switchyard listening');
      return { traffic, admin };
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  /** What an operator checks first in the start-up line: which build, where engines come from, how requests are routed. */
  #startupSummary(): Record<string, unknown> {
    const { discovery, routing } = this.config;
    return {
      version: VERSION,
      node: process.version,
      discovery: discovery.mode,
      ...(Object.keys(discovery.sources).length === 0 ? {} : { sources: Object.keys(discovery.sources) }),
      staticBackends: this.config.backends.length,
      policy: routing.policy,
      endpoints: [...this.view.all()].length,
    };
  }

  /** SIGTERM behaviour: drain, then release everything. Resolves when the process may exit 0. */
  async drainAndClose(): Promise<void> {
    const { preStopDelayMs, drainTimeoutMs } = this.config.lifecycle;
    const flushBy = performance.now() + preStopDelayMs + drainTimeoutMs;
    const drained = this.drain.run(
      { traffic: this.#servers.traffic, inFlight: () => this.#capacity.openRequests.count, logger: this.logger },
      this.config.lifecycle,
    );
    this.#servers.admin.publish(); // readiness fails at once, not at the next heartbeat
    await drained;
    await this.close();
    // The spans of the last requests (ended as close() ended their exchanges) go out within what
    // is left of the drain deadline, and at least one export's worth when the drain used it all.
    await this.#tracing?.shutdown(Math.max(flushBy - performance.now(), Math.min(this.config.tracing.exportTimeoutMs, 2_000)));
  }

  /** Closes listeners, discovery and upstream connections at once (no drain). */
  async close(): Promise<void> {
    this.#servers.traffic.close();
    this.#servers.traffic.closeAllConnections();
    await this.#servers.admin.stop();
    this.#engineWatch.scraper.stop();
    this.#secrets.apiKeys?.stop();
    this.#shared.quotas?.stop();
    this.#shared.redis?.fleet.stop();
    this.#shared.redis?.safeStart?.stop();
    this.#capacity.lag.stop();
    this.#requestPath.shedLog.stop();
    await this.#discovery.allowList.stop();
    await this.#load.replicaWatch?.stop();
    await Promise.allSettled([this.#capacity.upstream.destroy(), this.#capacity.probeAgent.destroy(), this.#shared.redis?.store.close()]);
  }
}

/** Runs one bind; its failure names the port and the address, e.g. `cannot listen on the traffic port 0.0.0.0:8080: listen EADDRINUSE: ...`. */
async function bindOrExplain(port: 'traffic' | 'admin', address: string, bind: () => Promise<number>): Promise<number> {
  try {
    return await bind();
  } catch (err) {
    throw new Error(`cannot listen on the ${port} port ${address}: ${(err as Error).message.replace(/^admin port: /, '')}`, { cause: err });
  }
}
