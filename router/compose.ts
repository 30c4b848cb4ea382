/**
 * The composition root: builds the whole router from validated configuration.
 * The only place that wires modules together; nothing else reads the
 * environment.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { Agent } from 'undici';
import { normaliseBaseUrl, type EndpointSource } from '../discovery/endpoint.ts';
import { ModelAllowList } from '../discovery/model-allow-list.ts';
import { ModelProbe, httpModelFetcher } from '../discovery/model-probe.ts';
import { STATIC_SOURCE_NAME, StaticEndpointSource } from '../discovery/static-source.ts';
import { UnionEndpointSource } from '../discovery/union-source.ts';
import { registerDiscoveryMetrics } from '../discovery/kubernetes/discovery-metrics.ts';
import { KubernetesDiscovery, MODE_SOURCE_NAME, discoveryLogObserver } from '../discovery/kubernetes/kubernetes-discovery.ts';
import type { KubeConnectionOptions } from '../discovery/kubernetes/kube-config.ts';
import { ReplicaWatch } from '../discovery/kubernetes/replica-watch.ts';
import { namespaceTrustGap } from '../discovery/kubernetes/namespace-trust.ts';
import type { Config } from './config/schema.ts';
import { ConfigError } from './config/load.ts';
import { readSecretFile } from './config/secret-file.ts';
import { LoadView } from './load/load-view.ts';
import { ReplicaCount } from './load/replica-count.ts';
import { createLogger, describeFailure, type Logger } from './log.ts';
import { RouterMetrics, type BackgroundTask } from './metrics/metrics.ts';
import { AdmissionControl } from './admission/admission-control.ts';
import { EventLoopLagMonitor } from './admission/event-loop-lag.ts';
import { fitToFileLimit } from './admission/router-pressure.ts';
import { ShedLog } from './admission/shed-log.ts';
import { WaitQueue } from './admission/wait-queue.ts';
import { RetryBudget } from './proxy/retry-budget.ts';
import type { EndpointState } from './load/endpoint-state.ts';
import { fetchText } from '../discovery/upstream-body.ts';
import { Scraper } from './load/scraper.ts';
import { ProfileRegistry } from './scheduling/presets.ts';
import { Scheduler } from './scheduling/scheduler.ts';
import { Forwarder } from './proxy/forwarder.ts';
import { EngineCredentials } from './proxy/engine-credentials.ts';
import { createAdminApp } from './server/admin-app.ts';
import { AdminPort } from './server/admin-port.ts';
import { debugEndpointsDocument } from './server/debug-endpoints.ts';
import { adapterErrorResponse, createControlApp } from './server/control-app.ts';
import { createHttpServer, listen } from './server/http-server.ts';
import { Drain } from './server/drain.ts';
import type { ReadinessState } from './server/health.ts';
import { BodyBudget } from './request/body-budget.ts';
import { ConnectionGuard } from './server/connection-guard.ts';
import { SlowBodyWatch } from './request/slow-body-watch.ts';
import { answerer, createTrafficListener } from './server/traffic-listener.ts';
import { BodyReader } from './request/body-reader.ts';
import { Classifier } from './request/classify.ts';
import { RequestLifecycle } from './request/lifecycle.ts';
import { PrefixGroups } from './load/prefix-groups.ts';
import { ResponsePins } from './load/response-pins.ts';
import { trustedProxies } from './server/trusted-proxies.ts';
import { SharedStateMetrics } from './metrics/shared-state-metrics.ts';
import { FleetLoad } from './state/fleet-load.ts';
import { newReplicaId } from './state/fleet-membership.ts';
import { FleetSafeStart } from './state/fleet-safe-start.ts';
import { createRedisClient, redisConfigured } from './state/redis-client.ts';
import { SessionAssignments } from './state/session-assignments.ts';
import { sessionNamesFor } from './state/session-names.ts';
import { SharedStore, sharedStoreSettings } from './state/shared-store.ts';
import type { TaskFailureReporter } from './state/background-task.ts';
import { ApiKeysFile } from './request/api-keys-file.ts';
import { TenantGate } from './request/tenant-gate.ts';
import { TenantQuotas } from './state/quota.ts';
import { VERSION } from './version.ts';
import { AccessLog } from './request/access-log.ts';
import { readExporterHeaders } from './config/exporter-headers.ts';
import type { Tracing } from './tracing/otel-tracing.ts';

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
  readonly drain = new Drain();
  readonly #source: EndpointSource;
  readonly #kubernetes: KubernetesDiscovery | undefined;
  /** How many replicas share the engines (counted from the router's Service, or configured). */
  readonly #replicas: ReplicaCount;
  /** Counts them from the router's own Service; undefined without load.replicasFromService. */
  readonly #replicaWatch: ReplicaWatch | undefined;
  readonly #probe: ModelProbe;
  readonly #allowList: ModelAllowList;
  readonly #scraper: Scraper;
  readonly #upstream: Agent;
  readonly #probeAgent: Agent;
  readonly #traffic: Server;
  readonly #admin: AdminPort;
  readonly #lag: EventLoopLagMonitor;
  readonly #shedLog: ShedLog;
  readonly #tracing: Tracing | undefined;
  /** API keys and tenant quotas; undefined without auth.apiKeysFile. */
  readonly #apiKeys: ApiKeysFile | undefined;
  readonly #quotas: TenantQuotas | undefined;
  /** Redis and what it shares; undefined without Redis configured. */
  readonly #shared: SharedState | undefined;
  readonly sharedMetrics: SharedStateMetrics;
  #inFlight = 0;
  /** The admin port's connection cap, fitted to the open-file limit. */
  readonly #adminConnections: number;

  constructor(config: Config, options: RouterOptions = {}) {
    this.config = config;
    this.logger = options.logger ?? createLogger(config.logLevel);
    this.#lag = options.lagMonitor ?? new EventLoopLagMonitor();
    this.#tracing = options.tracing;
    // Engine keys by source name, kept here: never on the endpoints /debug/endpoints renders.
    const credentials = engineCredentials(config);
    // Read before anything is started, so an unusable file stops start-up with a ConfigError.
    const adminToken = config.adminTokenFile === undefined ? undefined : readSecretFile(config.adminTokenFile, 'adminTokenFile');
    this.#apiKeys = config.auth.apiKeysFile === undefined ? undefined : ApiKeysFile.open(config.auth.apiKeysFile, this.logger);
    const sessionNames = sessionNamesFor(
      { keySecretFile: config.sessions.keySecretFile, keyPrefix: config.redis.keyPrefix, shared: redisConfigured(config.redis) },
      readSecretFile,
      (message) => this.logger.warn(message),
      (message) => new ConfigError(message),
    );
    const env = options.env ?? process.env;
    this.#replicas = new ReplicaCount(config.load.replicas);
    this.#replicaWatch = replicaWatch(config, env, this.#replicas, this.logger);
    this.view = new LoadView({
      maxScrapeAgeMs: config.scrape.maxAgeMs ?? 3 * config.scrape.intervalMs,
      defaultCapacity: config.load.defaultCapacity,
      ejection: config.load.ejection,
      // With the adaptive engine queue, the safe start still steps by one request past what an engine runs.
      safeStart: { ...config.load.safeStart, queueBudget: config.admission.maxWaiting ?? 1, replicas: this.#replicas },
      replicas: this.#replicas,
    });
    const queue = new WaitQueue<EndpointState>({
      maxLength: config.admission.queueLength,
      maxWaitMs: config.admission.queueMaxWaitMs,
      tenantShare: config.admission.tenantQueueShare,
    });
    const fitted = fitToFileLimit(config.admission, { adminConnections: config.adminMaxConnections });
    this.#adminConnections = fitted.adminConnections;
    const connections = new ConnectionGuard({ maxConnections: fitted.limits.maxConnections, maxPerClient: config.server.maxConnectionsPerClient });
    this.#upstream = new Agent({
      connections: config.upstream.connectionsPerEndpoint ?? fitted.limits.maxInFlight,
      connect: { timeout: config.timeouts.connectMs },
      pipelining: 1,
    });
    // Model probes and scrapes share one small pool, apart from request traffic.
    this.#probeAgent = new Agent({ connections: 2, connect: { timeout: config.timeouts.connectMs } });
    this.#kubernetes = options.source === undefined ? kubernetesDiscovery(config, env, this.logger) : undefined;
    this.#source = options.source ?? configuredSource(config, this.#kubernetes, this.logger);
    this.#probe = new ModelProbe(
      this.#source,
      httpModelFetcher(this.#probeAgent, config.modelsRefresh.timeoutMs, (source) => credentials.engineAuthorization(source)),
      config.modelsRefresh,
    );
    // After the probe, so models learnt from /v1/models pass the same per-source allow-list as labels.
    this.#allowList = new ModelAllowList(this.#probe, allowLists(config), (dropped) =>
      this.logger.warn(
        { backend: dropped.id, source: dropped.source, dropped: dropped.dropped, droppedCount: dropped.droppedCount, kept: dropped.kept },
        "endpoint claims models its source's allowedModels do not allow; ignoring them",
      ),
    );
    if (this.#kubernetes !== undefined) warnOnNamespaceTrustGap(this.#kubernetes, config, this.logger);
    const bodyBudget = new BodyBudget(config.server.bodyBudgetBytes);
    this.metrics = new RouterMetrics({
      backends: () => {
        this.view.tick();
        return this.view.all();
      },
      routerInFlight: () => this.#inFlight,
      connections: () => connections.count,
      eventLoopLagMs: () => this.#lag.lagMs,
      queueLength: () => queue.length,
      bufferedBodyBytes: () => bodyBudget.usedBytes,
    });
    let shared: SharedState | undefined;
    this.sharedMetrics = new SharedStateMetrics(
      this.metrics.registry,
      redisConfigured(config.redis)
        ? { status: () => shared?.store.status ?? 'degraded', fleetReplicas: () => shared?.fleet.replicasSeen ?? 1, fleetLoadAgeSeconds: () => shared?.fleet.ageSeconds() ?? 0 }
        : undefined,
    );
    const onTaskFailure: TaskFailureReporter = (task, err) => this.reportBackgroundFailure(task, err);
    this.#shared = shared = sharedState(config, this.view, this.#replicas, this.sharedMetrics, this.logger, () => this.#admin.publish(), onTaskFailure);
    this.#quotas = this.#apiKeys === undefined ? undefined : tenantQuotas(config, shared, onTaskFailure);
    const tenants = this.#apiKeys === undefined || this.#quotas === undefined ? undefined : tenantGate(this.#apiKeys, this.#quotas, this.sharedMetrics);
    const kubernetes = this.#kubernetes;
    if (kubernetes !== undefined) registerDiscoveryMetrics(this.metrics.registry, () => kubernetes.status());
    this.view.onDeparture = (state) => this.metrics.forgetBackend(state);
    this.view.onLimitsRaised = () => queue.notify();
    this.view.onEjection = (state, until) => {
      this.metrics.countEjection(state);
      this.logger.warn({ backend: state.id, until: new Date(until).toISOString(), ejections: state.ejections }, 'endpoint ejected after repeated failures');
    };
    // Built once per source, not per scrape.
    const scrapeHeaders = new Map<string | undefined, Record<string, string>>();
    const scrapeHeadersFor = (source: string | undefined): Record<string, string> => {
      let headers = scrapeHeaders.get(source);
      if (headers === undefined) {
        const authorization = credentials.engineAuthorization(source);
        scrapeHeaders.set(source, (headers = authorization === undefined ? {} : { authorization }));
      }
      return headers;
    };
    this.#scraper = new Scraper(
      this.view,
      (baseUrl, source) =>
        fetchText(this.#probeAgent, new URL(`${baseUrl}/metrics`), { timeoutMs: config.scrape.timeoutMs, maxBytes: config.scrape.maxBytes, headers: scrapeHeadersFor(source) }),
      config.scrape,
      {
        scraped: (state, seconds, error) => {
          this.metrics.observeScrape(state, seconds, error !== undefined);
          if (error === undefined) queue.notify();
        },
        failing: (state, error) => this.logger.warn({ backend: state.id, error }, 'scraping engine metrics started failing; its load goes stale'),
        recovered: (state, failedForMs) => this.logger.info({ backend: state.id, failedForMs }, 'scraping engine metrics recovered'),
      },
    );
    const profiles = new ProfileRegistry(config.routing, Math.random);
    const scheduler = new Scheduler<EndpointState>({
      view: this.view,
      profiles,
      thresholds: { ...config.admission, maxInFlightPerEndpoint: perEndpointCap(config.admission.maxInFlightPerEndpoint, config.upstream.connectionsPerEndpoint) },
      countDecision: (policy, outcome) => this.metrics.countDecision(policy, outcome),
      countMove: (reason) => this.sharedMetrics.countSessionMove(reason),
    });
    this.#shedLog = new ShedLog(this.logger);
    if (fitted.limits.maxConnections < config.admission.maxConnections || fitted.limits.maxInFlight < config.admission.maxInFlight || fitted.adminConnections < config.adminMaxConnections) {
      this.logger.warn({ openFiles: fitted.openFiles, ...fitted.limits, adminMaxConnections: fitted.adminConnections }, 'router caps lowered to fit the open-file limit');
    }
    const admission = new AdmissionControl<EndpointState>({
      decide: (facts, priority) => scheduler.schedule(facts, priority),
      queue,
      limits: fitted.limits,
      // Sustained or growing lag only: a one-off stall is over before its 429 would go out.
      gauges: () => ({ inFlight: this.#inFlight, connections: connections.count, lagMs: this.#lag.sustainedLagMs }),
      maxWaiting: config.admission.maxWaiting,
      homeWaitMs: HOME_WAIT_SCRAPES * config.scrape.intervalMs,
      now: Date.now,
      observer: {
        shed: (reason, priority) => {
          this.metrics.countShed(reason, priority);
          this.#shedLog.shed(reason);
        },
        queued: (priority) => this.metrics.countQueued(priority),
        waited: (seconds) => this.metrics.observeQueueWait(seconds),
      },
    });
    const view = this.view;
    const forwarder = new Forwarder({
      dispatcher: this.#upstream,
      load: {
        begin: (state) => view.begin(state),
        // A limit that rises on a fast first byte wakes the queue (view.onLimitsRaised).
        firstByte: (state, token, ttfbMs) => view.firstByte(state, token, ttfbMs),
        settle: (state, token, failure, serviceMs) => view.settle(state, token, failure, serviceMs),
      },
      metrics: this.metrics,
      timeouts: config.timeouts,
      retry: config.upstream.retry,
      retryBudget: new RetryBudget(config.upstream.retryBudgetRatio, config.upstream.retryBudgetMin, () => this.#inFlight),
      requestIdHeader: config.requestIdHeader,
      authorizationFor: (target) => credentials.rule(target.endpoint.source),
      onUpstreamFailure: (backend, kind, _err, requestId) => this.logger.debug({ requestId, backend, kind }, 'upstream request failed'),
      endpointHeader: config.server.endpointHeader,
      endpointName: endpointNamer(config.backends),
    });
    const readinessState = (): ReadinessState => ({ discoverySynced: this.view.synced, draining: this.drain.draining, sharedState: this.#shared?.store.status ?? 'off' });
    const control = createControlApp({
      routableModels: () => this.view.routableModels(),
      readiness: readinessState,
      startedAtS: Math.floor(Date.now() / 1000),
    });
    const classifier = new Classifier({
      models: this.view,
      sessionHeader: config.routing.sessionHeader,
      sessionFromUser: config.routing.sessionFromUser,
      sessionNames,
      defaultModel: config.routing.defaultModel,
      usesPrefix: (model) => profiles.usesPrefix(model),
      groups: new PrefixGroups({ maxGroups: config.routing.prefix.maxGroups }),
      pins: new ResponsePins(),
      sessions: shared?.sessions,
      now: Date.now,
    });
    const lifecycle = new RequestLifecycle({
      priority: { header: config.admission.priorityHeader, trusted: trustedProxies(config.server.trustedProxies) },
      admission,
      // The canonical prompt prefix is read only when a profile hashes it.
      reader: new BodyReader(bodyBudget, new SlowBodyWatch({ minBytesPerSecond: config.server.minBodyBytesPerSecond, graceMs: config.server.bodyRateGraceMs }), {
        ...config.server,
        promptPrefixBytes: profiles.anyUsesPrefix ? config.routing.prefix.prefixBytes : 0,
      }),
      classifier,
      tenants,
      tenantCacheSalt: config.auth.tenantCacheSalt,
      forward: (request) => forwarder.forward(request),
      inFlight: {
        increment: () => this.#inFlight++,
        decrement: () => {
          this.#inFlight--;
          // A finished request freed a slot somewhere: queued requests may go now.
          queue.notify();
        },
      },
      answer: answerer,
      observer: {
        countRequest: (route, model, status) => this.metrics.countRequest(route, model, status),
        observeShed: (seconds) => this.metrics.observeShedDuration(seconds),
        countShed: (reason, priority) => this.metrics.countShed(reason, priority),
      },
      requestIdHeader: config.requestIdHeader,
      accessLog: new AccessLog(config.accessLog, options.accessLogOut),
      tracer: options.tracing?.tracer,
      warn: (fields, message) => this.logger.warn(fields, message),
    });
    const trafficListener = createTrafficListener({
      lifecycle,
      connections,
      closing: () => this.drain.closing,
      fallback: tenants === undefined ? nodeListener(control.fetch) : tenants.guardLocalRoutes(nodeListener(control.fetch), answerer),
    });
    const onServerError = (err: Error) => this.logger.error({ err: err.message }, 'server error (the router keeps running)');
    this.#traffic = createHttpServer(config.server, trafficListener, onServerError);
    this.#traffic.on('connection', (socket: Socket) => connections.accept(socket));
    const admin = createAdminApp({
      registry: this.metrics.registry,
      debugEndpoints: () =>
        debugEndpointsDocument(this.view, this.#inFlight, {
          modelProbe: (endpoint) => this.#probe.status(endpoint.url, endpoint.source),
          discovery: () => this.#kubernetes?.debugStatus() ?? [],
          replicas: () => ({ count: this.#replicas.value ?? null, source: this.#replicas.source, watch: this.#replicaWatch?.debugStatus() ?? null }),
          scrapeFailure: (state) => this.#scraper.failure(state),
          scrapeDialect: (state) => this.#scraper.dialect(state),
          sessionsByEndpoint: () => this.#shared?.sessions.sessionsByEngine(),
        }),
    });
    this.#admin = new AdminPort({
      address: config.adminListen,
      livenessStallMs: config.lifecycle.livenessStallMs,
      fetch: admin.fetch,
      readiness: readinessState,
      token: adminToken,
      maxConnections: this.#adminConnections,
    });
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
    return this.#inFlight;
  }

  /**
   * Starts discovery and both listeners. Rejects when either port cannot be
   * bound, after releasing everything it started: the caller must exit
   * non-zero, since a process without its traffic port would keep answering
   * probes with 200 while serving nothing, and one without its admin port
   * would keep scraping with no probe to say so.
   */
  async start(): Promise<BoundPorts> {
    this.#allowList.start((set) => {
      this.view.update(set);
      this.#admin.publish();
      this.logger.info({ setVersion: set.version, endpoints: set.endpoints.length }, 'endpoint set updated');
    });
    this.#scraper.start();
    this.#replicaWatch?.start();
    this.#apiKeys?.start(this.config.auth.reloadIntervalMs);
    this.#quotas?.start();
    this.#shared?.fleet.start();
    this.#shared?.safeStart?.start();
    this.#lag.start();
    const { discovery } = this.config;
    if (this.config.backends.length === 0 && discovery.mode === 'static' && Object.keys(discovery.sources).length === 0) {
      this.logger.warn('no engines configured: every model is unknown until --backend URL, or discovery.mode pods or endpointslices, names some');
    }
    try {
      const admin = await bindOrExplain('admin', this.config.adminListen, () => this.#admin.start());
      const traffic = await bindOrExplain('traffic', this.config.listen, () => listen(this.#traffic, this.config.listen, this.config.server.listenBacklog));
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
      { traffic: this.#traffic, inFlight: () => this.#inFlight, logger: this.logger },
      this.config.lifecycle,
    );
    this.#admin.publish(); // readiness fails at once, not at the next heartbeat
    await drained;
    await this.close();
    // The spans of the last requests (ended as close() ended their exchanges) go out within what
    // is left of the drain deadline, and at least one export's worth when the drain used it all.
    await this.#tracing?.shutdown(Math.max(flushBy - performance.now(), Math.min(this.config.tracing.exportTimeoutMs, 2_000)));
  }

  /** Closes listeners, discovery and upstream connections at once (no drain). */
  async close(): Promise<void> {
    this.#traffic.close();
    this.#traffic.closeAllConnections();
    await this.#admin.stop();
    this.#scraper.stop();
    this.#apiKeys?.stop();
    this.#quotas?.stop();
    this.#shared?.fleet.stop();
    this.#shared?.safeStart?.stop();
    this.#lag.stop();
    this.#shedLog.stop();
    await this.#allowList.stop();
    await this.#replicaWatch?.stop();
    await Promise.allSettled([this.#upstream.destroy(), this.#probeAgent.destroy(), this.#shared?.store.close()]);
  }
}

/** Scrape intervals a request waits for its own engine at the engine's burst bound before it goes elsewhere (see AdmissionControl). */
const HOME_WAIT_SCRAPES = 3;

/**
 * The safe start is shared every this many fleet-load publishes: limits move
 * at scrapes (a second apart by default), so sharing them as often as the
 * in-flight counts would only double the Redis traffic.
 */
const SAFE_START_SHARE_INTERVALS = 4;

/** Redis and what the replicas share through it. */
interface SharedState {
  readonly store: SharedStore;
  readonly fleet: FleetLoad;
  /** Undefined with the safe start off. */
  readonly safeStart: FleetSafeStart | undefined;
  readonly sessions: SessionAssignments;
}

/**
 * The shared state, when `redis.*` configures one: the store (connecting in
 * the background: a Redis that is down at start-up is a degraded start, not
 * a failed one), the fleet load and the shared session assignments.
 * `published` is told of status changes so /readyz shows them at once.
 */
function sharedState(
  config: Config,
  view: LoadView,
  replicas: ReplicaCount,
  metrics: SharedStateMetrics,
  logger: Logger,
  published: () => void,
  onTaskFailure: TaskFailureReporter,
): SharedState | undefined {
  if (!redisConfigured(config.redis)) return undefined;
  const settings = config.redis;
  const store = new SharedStore(
    createRedisClient(settings, readSecretFile),
    sharedStoreSettings(settings),
    {
      commandDone: (command, seconds) => metrics.observeCommand(command, seconds),
      commandFailed: (command, failure) => metrics.countFailure(command, failure),
      breakerMoved: (to) => metrics.countBreakerTransition(to),
      statusChanged: (status, reason) => {
        if (status === 'up') logger.info({ reason }, 'shared state (Redis) up: routing on fleet-wide state');
        else logger.warn({ reason }, 'shared state (Redis) degraded: routing on this replica\'s own state until it recovers');
        published();
      },
    },
  );
  const replicaId = newReplicaId();
  const fleet = new FleetLoad(store, view, { replicaId, publishIntervalMs: settings.publishIntervalMs, replicaTtlMs: settings.replicaTtlMs, onTaskFailure, replicas });
  const safeStart = config.load.safeStart.enabled
    ? new FleetSafeStart(store, view, { replicaId, intervalMs: SAFE_START_SHARE_INTERVALS * settings.publishIntervalMs, replicaTtlMs: settings.replicaTtlMs, onTaskFailure })
    : undefined;
  const sessions = new SessionAssignments(store, config.sessions, (result) => metrics.countSessionLookup(result), Date.now, onTaskFailure);
  return { store, fleet, safeStart, sessions };
}

/** Tenant quotas: shared through Redis when it is configured, local and in full otherwise. */
function tenantQuotas(config: Config, shared: SharedState | undefined, onTaskFailure: TaskFailureReporter): TenantQuotas {
  return new TenantQuotas({
    onTaskFailure,
    shared: shared === undefined ? undefined : { store: shared.store, membership: shared.fleet },
    checkTimeoutMs: config.quotas.checkTimeoutMs,
    replicaTtlMs: config.redis.replicaTtlMs,
  });
}

/** The authentication and quota stages, counted in the shared-state metrics. */
function tenantGate(keys: ApiKeysFile, quotas: TenantQuotas, metrics: SharedStateMetrics): TenantGate {
  return new TenantGate({
    keys,
    quotas,
    observer: { authFailed: (reason) => metrics.countAuthFailure(reason), quotaRejected: (tenant, limit) => metrics.countQuotaRejection(tenant, limit) },
  });
}

/** Runs one bind; its failure names the port and the address, e.g. `cannot listen on the traffic port 0.0.0.0:8080: listen EADDRINUSE: ...`. */
async function bindOrExplain(port: 'traffic' | 'admin', address: string, bind: () => Promise<number>): Promise<number> {
  try {
    return await bind();
  } catch (err) {
    throw new Error(`cannot listen on the ${port} port ${address}: ${(err as Error).message.replace(/^admin port: /, '')}`, { cause: err });
  }
}

/** Adapts a Hono app to a Node listener; the adapter answers its own errors, so its promise is not awaited. */
function nodeListener(fetch: Parameters<typeof getRequestListener>[0]): (req: IncomingMessage, res: ServerResponse) => void {
  // HTTP/1.0 requests may come without Host (HTTP/1.1 ones without it are refused before this).
  const listener = getRequestListener(fetch, { overrideGlobalObjects: false, hostname: 'localhost', errorHandler: adapterErrorResponse });
  return (req, res) => void listener(req, res);
}

/** Where the Kubernetes API is, for discovery and the replica count alike. */
function kubeConnection(config: Config, env: Readonly<Record<string, string | undefined>>): KubeConnectionOptions {
  return {
    kubeconfig: config.kubeconfig ?? env['KUBECONFIG'],
    serviceHost: env['KUBERNETES_SERVICE_HOST'],
    servicePort: env['KUBERNETES_SERVICE_PORT'],
    serviceAccountDir: config.discovery.serviceAccountDir,
  };
}

/** The Kubernetes sources of `config.discovery`, or undefined when discovery is static only. */
function kubernetesDiscovery(config: Config, env: Readonly<Record<string, string | undefined>>, logger: Logger): KubernetesDiscovery | undefined {
  return KubernetesDiscovery.create(config.discovery, kubeConnection(config, env), discoveryLogObserver(logger));
}

/** The watch that counts this router's replicas into `replicas`, when load.replicasFromService names its Service. */
function replicaWatch(config: Config, env: Readonly<Record<string, string | undefined>>, replicas: ReplicaCount, logger: Logger): ReplicaWatch | undefined {
  const service = config.load.replicasFromService;
  if (service === undefined) return undefined;
  return ReplicaWatch.connect(kubeConnection(config, env), service, config.discovery, {
    counted: (count) => {
      replicas.counted(count);
      if (count === 0) logger.warn({ service }, "load.replicasFromService: the Service lists no pods, not even this one; is it the router's own Service? Counting this replica alone");
      else logger.info({ service, replicas: count }, 'router replicas counted from the Service');
    },
    failing: (error) => logger.warn({ service, error }, 'router replicas cannot be counted from the Service; keeping the last count (or load.replicas)'),
    recovered: () => logger.info({ service }, 'router replicas counted from the Service again'),
  });
}

/** Kubernetes sources, plus the static list when it has entries (or is all there is), merged into one. */
function configuredSource(config: Config, kubernetes: KubernetesDiscovery | undefined, logger: Logger): EndpointSource {
  const sources: EndpointSource[] = kubernetes === undefined ? [] : [kubernetes];
  if (config.backends.length > 0 || kubernetes === undefined) sources.push(new StaticEndpointSource(config.backends, config.load.capacity, STATIC_SOURCE_NAME, config.scrape.dialects));
  if (sources.length === 1) return sources[0] as EndpointSource;
  return new UnionEndpointSource(sources, (id) => logger.warn({ backend: id }, 'two discovery sources gave the same endpoint id; keeping the first'));
}

/** Engine keys per source; key files are read once, here, and checked like every secret file. */
function engineCredentials(config: Config): EngineCredentials {
  const { discovery } = config;
  const withFallback: Record<string, { apiKey?: string | undefined; apiKeyFile?: string | undefined }> = { [STATIC_SOURCE_NAME]: discovery.static };
  if (discovery.mode !== 'static') withFallback[MODE_SOURCE_NAME] = discovery;
  const option = (source: string | undefined) =>
    source === undefined ? 'upstream.apiKeyFile' : source === STATIC_SOURCE_NAME ? 'discovery.static.apiKeyFile' : source === MODE_SOURCE_NAME ? 'discovery.apiKeyFile' : `discovery.sources.${source}.apiKeyFile`;
  // With API keys on, the client's Authorization header authenticates it to switchyard and is never forwarded.
  const forwardClientAuthorization = config.upstream.forwardClientAuthorization ?? config.auth.apiKeysFile === undefined;
  return EngineCredentials.build({ upstream: { ...config.upstream, forwardClientAuthorization }, withFallback, ownKeyOnly: discovery.sources }, (path, source) => readSecretFile(path, option(source)));
}

/** Model allow-lists per source name; sources without one are absent. */
function allowLists(config: Config): Map<string, readonly string[]> {
  const { discovery } = config;
  const lists = new Map<string, readonly string[]>();
  if (discovery.static.allowedModels !== undefined) lists.set(STATIC_SOURCE_NAME, discovery.static.allowedModels);
  if (discovery.mode !== 'static' && discovery.allowedModels !== undefined) lists.set(MODE_SOURCE_NAME, discovery.allowedModels);
  for (const [name, source] of Object.entries(discovery.sources)) if (source.allowedModels !== undefined) lists.set(name, source.allowedModels);
  return lists;
}

/** One warning at start-up when several namespaces are watched and a source there may claim any model. */
function warnOnNamespaceTrustGap(kubernetes: KubernetesDiscovery, config: Config, logger: Logger): void {
  const lists = allowLists(config);
  const gap = namespaceTrustGap(kubernetes.sources.map((s) => ({ name: s.name, namespace: s.spec.namespace, restricted: lists.has(s.name) })));
  if (gap === undefined) return;
  logger.warn(
    { namespaces: gap.namespaces, sourcesWithoutAllowedModels: gap.unrestricted },
    'discovery watches several namespaces and some sources have no allowedModels: any pod they select can claim any model and receive its prompts',
  );
}

/**
 * The in-flight count at which an endpoint is saturated: the configured
 * admission cap, lowered to the upstream connection cap when that is set.
 * A request over the connection cap would otherwise wait inside the HTTP
 * client for a connection to free up: forwarded as far as the load view
 * knows, but invisible to the engine's queue metrics and to shedding.
 */
export function perEndpointCap(admissionCap: number, connectionsPerEndpoint: number | undefined): number {
  if (connectionsPerEndpoint === undefined) return admissionCap;
  return admissionCap > 0 ? Math.min(admissionCap, connectionsPerEndpoint) : connectionsPerEndpoint;
}

/**
 * What the endpoint header calls an endpoint: its id (a pod's `namespace/name`), or
 * `static-N` for the N-th static backend, whose id is its address. The static names are
 * worked out once, not per response.
 */
function endpointNamer(backends: readonly string[]): (target: EndpointState) => string {
  const staticNames = new Map(backends.map((url, index) => [normaliseBaseUrl(url), `static-${index}`] as const));
  return ({ endpoint }) => (endpoint.source !== STATIC_SOURCE_NAME && endpoint.source !== undefined ? endpoint.id : (staticNames.get(endpoint.id) ?? 'static'));
}
