/**
 * One inference request's path through the router: authentication and
 * tenant quota (with API keys), admission, body reading, classification and
 * forwarding, run by the request lifecycle.
 */
import type { Writable } from 'node:stream';
import { normaliseBaseUrl } from '../../discovery/endpoint.ts';
import { STATIC_SOURCE_NAME } from '../../discovery/static-source.ts';
import { AdmissionControl } from '../admission/admission-control.ts';
import { ShedLog } from '../admission/shed-log.ts';
import type { Config } from '../config/schema.ts';
import type { EndpointState } from '../load/endpoint-state.ts';
import type { LoadView } from '../load/load-view.ts';
import type { Logger } from '../log.ts';
import type { RouterMetrics } from '../metrics/metrics.ts';
import { Forwarder } from '../proxy/forwarder.ts';
import { RetryBudget } from '../proxy/retry-budget.ts';
import { AccessLog } from '../request/access-log.ts';
import { BodyReader } from '../request/body-reader.ts';
import { Classifier } from '../request/classify.ts';
import { RequestLifecycle } from '../request/lifecycle.ts';
import { PrefixFactsHook } from '../request/prefix-facts-hook.ts';
import { PrefixPlacementHook, type PlacementRule } from '../request/prefix-placement-hook.ts';
import { PrefixGroups } from '../request/prefix-groups.ts';
import { RequestHooks, type RequestHook } from '../request/request-hooks.ts';
import { spanEnd, type RequestTracer } from '../request/request-trace.ts';
import { ResponsePinHook } from '../request/response-pin-hook.ts';
import { ResponsePins } from '../request/response-pins.ts';
import { SessionAssignmentHook } from '../request/session-assignment-hook.ts';
import { SlowBodyWatch } from '../request/slow-body-watch.ts';
import { TenantGate } from '../request/tenant-gate.ts';
import { homeWaitMs } from '../scheduling/saturation.ts';
import { answerer } from '../server/traffic-listener.ts';
import { trustedProxies } from '../server/trusted-proxies.ts';
import type { Capacity } from './capacity.ts';
import type { InferenceExtension } from './inference-extension.ts';
import type { Scheduling } from './scheduling.ts';
import type { Secrets } from './secrets.ts';
import type { SharedState } from './shared-state.ts';

/** Scrape intervals a request waits at most for its own engine before it goes elsewhere (see router/scheduling/saturation.ts, homeWaitMs). */
const HOME_WAIT_SCRAPES = 3;

/** The request path; the router stops the shed log. */
export interface RequestPath {
  /** Runs each request on the traffic port through its stages. */
  readonly lifecycle: RequestLifecycle;
  /** Authentication and tenant quotas; undefined without API keys (then local routes are open too). */
  readonly tenants: TenantGate | undefined;
  /** Logs sheds at most so often, by reason. */
  readonly shedLog: ShedLog;
}

/** What {@link buildRequestPath} reads, uses and reports to. */
export interface RequestPathDeps {
  readonly logger: Logger;
  readonly secrets: Secrets;
  readonly view: LoadView;
  readonly capacity: Capacity;
  readonly metrics: RouterMetrics;
  readonly shared: SharedState;
  readonly scheduling: Scheduling;
  /** Model rewrites and InferenceObjective priorities. */
  readonly inferenceExtension: InferenceExtension;
  /** Where the access log goes; stdout when undefined. */
  readonly accessLogOut: Writable | undefined;
  /** Request tracing; undefined: none. */
  readonly tracer: RequestTracer | undefined;
}

/** Builds the request path. Warns once when the router's caps had to be lowered to fit the open-file limit. */
export function buildRequestPath(config: Config, deps: RequestPathDeps): RequestPath {
  const { capacity, metrics, scheduling } = deps;
  const shedLog = new ShedLog(deps.logger);
  warnOnLoweredCaps(config, capacity, deps.logger);
  const admission = admissionControl(config, deps, shedLog);
  const forwarder = forwarderFor(config, deps);
  const tenants = tenantGate(deps);
  const lifecycle = new RequestLifecycle({
    priority: {
      header: config.admission.priorityHeader,
      trusted: trustedProxies(config.server.trustedProxies),
      objectiveHeader: config.inferenceExtension.objectiveHeader,
      objective: (value) => deps.inferenceExtension.objectives.priorityOf(value),
    },
    admission,
    // The canonical prompt prefix is read only when a profile hashes it.
    reader: new BodyReader(capacity.bodyBudget, new SlowBodyWatch({ minBytesPerSecond: config.server.minBodyBytesPerSecond, graceMs: config.server.bodyRateGraceMs }), {
      ...config.server,
      promptPrefixBytes: scheduling.profiles.anyUsesPrefix ? config.routing.prefix.prefixBytes : 0,
    }),
    classifier: new Classifier({
      models: deps.view,
      sessionHeader: config.routing.sessionHeader,
      sessionFromUser: config.routing.sessionFromUser,
      sessionNames: deps.secrets.sessionNames,
      defaultModel: config.routing.defaultModel,
      rewrites: deps.inferenceExtension.rewrites,
    }),
    hooks: requestHooks(config, deps),
    tenants,
    tenantCacheSalt: config.auth.tenantCacheSalt,
    forward: (request) => forwarder.forward(request),
    inFlight: capacity.openRequests,
    answer: answerer,
    observer: {
      countRequest: (route, model, status) => metrics.countRequest(route, model, status),
      observeShed: (seconds) => metrics.observeShedDuration(seconds),
      countShed: (reason, priority) => metrics.countShed(reason, priority),
    },
    requestIdHeader: config.requestIdHeader,
    tracer: deps.tracer,
    warn: (fields, message) => deps.logger.warn(fields, message),
  });
  return { lifecycle, tenants, shedLog };
}

function warnOnLoweredCaps(config: Config, capacity: Capacity, logger: Logger): void {
  const { fitted } = capacity;
  if (fitted.limits.maxConnections < config.admission.maxConnections || fitted.limits.maxInFlight < config.admission.maxInFlight || fitted.adminConnections < config.adminMaxConnections) {
    logger.warn({ openFiles: fitted.openFiles, ...fitted.limits, adminMaxConnections: fitted.adminConnections }, 'router caps lowered to fit the open-file limit');
  }
}

/** Router-wide pressure, then the scheduler's decision, the wait queue or a shed. */
function admissionControl(config: Config, deps: RequestPathDeps, shedLog: ShedLog): AdmissionControl<EndpointState> {
  const { capacity, metrics, scheduling } = deps;
  return new AdmissionControl<EndpointState>({
    decide: (facts, priority) => scheduling.scheduler.schedule(facts, priority),
    servingModel: (model) => deps.view.candidates(model),
    queue: capacity.queue,
    limits: capacity.fitted.limits,
    // Sustained or growing lag only: a one-off stall is over before its 429 would go out.
    gauges: () => ({ inFlight: capacity.openRequests.count, connections: capacity.connections.count, lagMs: capacity.lag.sustainedLagMs }),
    maxWaiting: config.admission.maxWaiting,
    // Another replica's freed slot shows at a fleet read: a publish interval old, read one later.
    homeWaitMs: (engine) => homeWaitMs(engine, HOME_WAIT_SCRAPES * config.scrape.intervalMs, 2 * config.redis.publishIntervalMs),
    now: Date.now,
    observer: {
      shed: (reason, priority) => {
        metrics.countShed(reason, priority);
        shedLog.shed(reason);
      },
      // What waits here is published to the fleet: other replicas leave this one its share of full engines.
      queued: (priority, model) => {
        metrics.countQueued(priority);
        deps.view.queueEntered(model);
      },
      waited: (seconds, model) => {
        metrics.observeQueueWait(seconds);
        deps.view.queueLeft(model);
      },
    },
  });
}

/** Forwards to the chosen engine over the upstream pool, settling its load in the view. */
function forwarderFor(config: Config, deps: RequestPathDeps): Forwarder {
  const { view, capacity, logger } = deps;
  const { credentials } = deps.secrets;
  return new Forwarder({
    dispatcher: capacity.upstream,
    load: {
      begin: (state) => view.begin(state),
      // A limit that rises on a fast first byte wakes the queue (view.onRoomOpened).
      firstByte: (state, token, ttfbMs) => view.firstByte(state, token, ttfbMs),
      settle: (state, token, failure, serviceMs) => view.settle(state, token, failure, serviceMs),
    },
    metrics: deps.metrics,
    timeouts: config.timeouts,
    retry: config.upstream.retry,
    retryBudget: new RetryBudget(config.upstream.retryBudgetRatio, config.upstream.retryBudgetMin, () => capacity.openRequests.count),
    requestIdHeader: config.requestIdHeader,
    authorizationFor: (target) => credentials.rule(target.endpoint.source),
    onUpstreamFailure: (backend, kind, _err, requestId) => logger.debug({ requestId, backend, kind }, 'upstream request failed'),
    endpointHeader: config.server.endpointHeader,
    endpointName: endpointNamer(config.backends),
  });
}

/**
 * The request hooks, in the order they run at each point. The response pin comes first, so
 * a request continuing another tenant's response is refused before a session lookup goes to
 * Redis; prefix facts record before the session's assignment is stored, and the access line
 * is written before the span ends. A hook with nothing to do here is not registered at all.
 */
function requestHooks(config: Config, deps: RequestPathDeps): RequestHooks {
  const { profiles } = deps.scheduling;
  const hooks: RequestHook[] = [
    new ResponsePinHook(new ResponsePins()),
    new PrefixFactsHook({ usesPrefix: (model) => profiles.usesPrefix(model), groups: new PrefixGroups({ maxGroups: config.routing.prefix.maxGroups }), now: Date.now }),
  ];
  // Without Redis, rendezvous hashing keeps sessions together: nothing to look up or store.
  const sessions = deps.shared.redis?.sessions;
  if (sessions !== undefined) hooks.push(new SessionAssignmentHook(sessions, (engine) => underPressure(deps.view.byId(engine))));
  const placements = deps.shared.redis?.prefixPlacements;
  if (placements !== undefined) hooks.push(new PrefixPlacementHook(placements, placementRule(config, deps.view)));
  const accessLog = new AccessLog(config.accessLog, deps.accessLogOut);
  if (accessLog.enabled) hooks.push(accessLog);
  if (deps.tracer !== undefined) hooks.push(spanEnd);
  return new RequestHooks(hooks);
}

/**
 * The prefix walk's rule for following a group's placement, from `routing.prefix` and the
 * model's endpoints: a profile's own `spread`, and the filters that narrow the pool, are not
 * seen here, so near the edge the hook may look up a group the walk spreads (a wasted GET).
 */
function placementRule(config: Config, view: LoadView): PlacementRule {
  const { spread } = config.routing.prefix;
  return { isRare: (model, share) => Math.ceil(spread * view.candidates(model).length * share) <= 1 };
}

/** A queue estimated or shown at the engine: where a replica may move sessions off (see SessionAssignmentHook). */
function underPressure(state: EndpointState | undefined): boolean {
  return state !== undefined && (state.estimatedWaiting > 0 || (!state.stale && (state.scraped?.waiting ?? 0) > 0));
}

/** The authentication and quota stages, counted in the shared-state metrics; undefined without API keys. */
function tenantGate(deps: RequestPathDeps): TenantGate | undefined {
  const keys = deps.secrets.apiKeys;
  const { quotas, metrics } = deps.shared;
  if (keys === undefined || quotas === undefined) return undefined;
  return new TenantGate({
    keys,
    quotas,
    observer: { authFailed: (reason) => metrics.countAuthFailure(reason), quotaRejected: (tenant, limit) => metrics.countQuotaRejection(tenant, limit) },
  });
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
